/**
 * `check` and `run` stop when asked, whatever the service does: against a service that never
 * answers, a SIGTERM (cron, Kubernetes) ends `check` at once, and `run` still starting (whoami
 * waiting out its retries) exits cleanly. And whoami is asked once for every job of a cycle, not
 * once per job: a dead service costs one whoami's retries, not six.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { spawnDaemon, until } from './daemon-fixture.js';

let sim: RunningSimulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 4 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-stop-'));
});
afterEach(() => {
  sim.control.clearFaults();
  sim.control.resetRequests();
});
afterAll(async () => {
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function config(api: string[] = []): string {
  return writeConfig(dir, [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: "off"',
    ...api,
    'state: { path: ./state.db }',
    'jobs: { jitter: 0s }',
    'notify:',
    '  channels: [{ name: console, type: log }]',
    'log: { level: warn, format: json }',
    'server: { listen: "off" }',
  ]);
}

const whoamis = () => sim.control.requests().filter((r) => r.fn === 'whoami').length;

describe('a service that does not answer', () => {
  it('costs one whoami (with its retries) for all seven jobs of a check, not one per job', async () => {
    sim.control.setFault('whoami', { errorCode: 'unavailable' });
    const { code, stdout } = await runCli(['check', '--config', config(['  max_retries: 2'])], {
      env: { DMS_API_TOKEN: sim.adminToken },
    });
    expect(code).toBe(1);
    expect(stdout.match(/failed: whoami: unavailable/g)).toHaveLength(7);
    expect(whoamis()).toBe(3);
  });

  it('ends check at once on SIGTERM (the CLI stop signal), exit 1, nothing read half written', async () => {
    sim.control.setFault('*', { hang: true });
    const stop = new AbortController();
    const checked = runCli(['check', '--config', config()], {
      env: { DMS_API_TOKEN: sim.adminToken },
      signal: stop.signal,
    });
    await until(
      'the first request',
      () => sim.control.requests().length > 0,
      () => '',
    );
    stop.abort(new Error('received SIGTERM'));
    const { code, stdout } = await checked;
    expect(code).toBe(1);
    expect(stdout).toMatch(/^servers\s+aborted: shutdown$/m);
    expect(stdout).toMatch(/0 of 7 jobs complete/);
  });

  it('lets run stop while it is still starting (whoami hanging), exit 0', async () => {
    sim.control.setFault('whoami', { hang: true });
    const daemon = spawnDaemon(sim, config(), '10s');
    await until('whoami to be asked', () => whoamis() > 0, daemon.output);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(daemon.output()).not.toContain('cannot ask whoami');
  });
});
