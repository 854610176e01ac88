/**
 * What `validate` warns of, the daemon logs when it starts (`run`, `check`) and when it reloads: a
 * configuration without a channel records alerts that nobody is told of.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { jsonLogLines, runCli, writeConfig } from '../helpers/cli-harness.js';

let sim: RunningSimulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator({ apps: 4, seed: 2 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-start-warn-'));
});
afterAll(async () => {
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const NO_CHANNEL = 'no channel is configured: alerts are recorded';

/** The simulator's config without a channel, logging JSON. */
function channelless(): string {
  return writeConfig(dir, [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: off',
    'state: { path: ./state.db }',
    'jobs: { maintenance: "off", jitter: 0s }',
    'server: { listen: "off" }',
    'log: { level: info, format: json }',
  ]);
}

/** The warnings of a JSON log, as [key, message]. */
function warnings(log: string): [string, string][] {
  return jsonLogLines(log)
    .filter((l) => l.level === 40)
    .map((l) => [l.key ?? '', l.msg]);
}

describe('a configuration without a channel', () => {
  it('is logged as a warning by check', async () => {
    const { code, stderr } = await runCli(['check', '--config', channelless()], {
      env: { DMS_API_TOKEN: sim.adminToken },
    });
    expect(code).toBe(0);
    expect(warnings(stderr)).toContainEqual(['notify.channels', expect.stringContaining(NO_CHANNEL)]);
  });

  it('is logged as a warning when run starts', async () => {
    const stop = new AbortController();
    const { code, stdout } = await runCli(['run', '--config', channelless()], {
      env: { DMS_API_TOKEN: sim.adminToken },
      signal: stop.signal,
      // Stopped once it has started: the warning comes before.
      onOutput: (out) => {
        if (out.includes('scheduler started')) stop.abort(new Error('test'));
      },
    });
    expect(code).toBe(0);
    expect(warnings(stdout)).toContainEqual(['notify.channels', expect.stringContaining(NO_CHANNEL)]);
  }, 30_000);
});
