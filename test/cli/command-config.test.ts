/** `run` and `check` read their command line and config the same way (loadCommandConfig). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import check from '../../src/cli/check.js';
import type { Command } from '../../src/cli/command.js';
import run from '../../src/cli/run.js';
import { NO_DEFAULT_CONFIG } from '../helpers/cli-harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-cmdcfg-'));
const invalid = path.join(dir, 'invalid.yaml');
fs.writeFileSync(invalid, 'api:\n  base_url: nope\n  token: t\n');
const valid = path.join(dir, 'valid.yaml');
fs.writeFileSync(valid, 'api: { base_url: "http://127.0.0.1:1", token: t }\n');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function exec(command: Command, argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      stderr += chunk.toString();
      done();
    },
  });
  const code = await command.run(argv, {
    stdout: sink,
    stderr: sink,
    env: {},
    signal: new AbortController().signal,
    defaultConfigFile: NO_DEFAULT_CONFIG,
  });
  return { code, stderr };
}

describe.each([
  ['run', run],
  ['check', check],
] as const)('%s', (_name, command) => {
  it.each<[string, string[], RegExp]>([
    [
      'no config file anywhere',
      [],
      /^error: no configuration file: give --config FILE, set \$DEPLOY_WATCHDOG_CONFIG, or create \/dev\/null\/\S+\n\nusage: deploy-watchdog /,
    ],
    ['an empty --config', ['--config', ''], /^error: --config needs a file name/],
    ['an unknown option', ['--config', valid, '--nope'], /^error: Unknown option '--nope'/],
    ['an invalid config', ['--config', invalid], /^configuration is not valid:\n.*invalid\.yaml:2 api\.base_url: /],
  ])('exits 2 on %s, saying why', async (_what, argv, message) => {
    const { code, stderr } = await exec(command, argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});

it.each<[Command, string[], RegExp]>([
  [run, ['--config', valid, '--stop-timeout', 'soon'], /^error: --stop-timeout: .*soon/],
  [check, ['--config', valid, '--job', 'nope'], /^error: unknown job "nope" \(jobs: servers, installers, runs, /],
])('%# refuses its own option with a usage error before reading the config', async (command, argv, message) => {
  const { code, stderr } = await exec(command, argv);
  expect(code).toBe(2);
  expect(stderr).toMatch(message);
});
