/**
 * A command whose reader goes away early, as in `deploy-watchdog schema | head -c 100`: the rest of
 * its output is dropped, and it ends with its own status, without node's stack for the EPIPE. The
 * daemon, which logs to standard output, stops as a failure instead, so a supervisor restarts it.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../packages/simulator/src/index.js';
import { freePort } from '../helpers/free-port.js';
import { binArgs } from '../helpers/test-build.js';
import { daemonConfigYaml, LOG_CHANNEL_NOTIFY } from './daemon-fixture.js';

const run = promisify(execFile);

/** `deploy-watchdog ARGS | head -c 100` in bash: what the command wrote to stderr, and its own exit status. */
async function intoHead(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  // A real pipe to a reader that stops after 100 bytes; bash reports the command's own status.
  const pipeline = '"$0" "$@" | head -c 100 > /dev/null; echo "status=${PIPESTATUS[0]}"';
  return run('bash', ['-c', pipeline, process.execPath, ...binArgs(args)], { env: { ...process.env, ...env } });
}

describe('standard output closed by its reader', () => {
  it('ends a command quietly with its own exit status', async () => {
    // `schema` prints ~190 kB, more than a pipe holds, so its writes outlive the reader.
    const { stdout, stderr } = await intoHead(['schema']);
    expect(stderr).toBe('');
    expect(stdout).toBe('status=0\n');
  }, 60_000);

  it('stops `run` as a failure, saying why', async () => {
    const sim = await startSimulator({ apps: 4, seed: 3 });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-closed-output-'));
    try {
      const configFile = path.join(dir, 'watchdog.yaml');
      const yaml = daemonConfigYaml(sim, {
        jobs: '{ runs: "*/2 * * * * *", maintenance: "off", jitter: 0s }',
        notify: LOG_CHANNEL_NOTIFY,
        server: `{ listen: "127.0.0.1:${await freePort()}" }`,
      });
      fs.writeFileSync(configFile, yaml);
      // Its JSON log lines fill the 100 bytes at start; the next ones find the reader gone.
      const { stdout, stderr } = await intoHead(['run', '--config', configFile], { DMS_API_TOKEN: sim.adminToken });
      expect(stderr).toContain('deploy-watchdog: standard output was closed: stopped');
      expect(stderr).not.toContain('EPIPE');
      expect(stdout).toBe('status=1\n');
    } finally {
      await sim.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
