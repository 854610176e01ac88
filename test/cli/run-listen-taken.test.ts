/**
 * `run` on a `server.listen` another process already holds: one log line that names the key and
 * says what to do, exit 1, rather than the socket's own error thrown out of the command.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { jsonLogLines, runCli, writeConfig } from '../helpers/cli-harness.js';
import { daemonConfigYaml, LOG_CHANNEL_NOTIFY } from './daemon-fixture.js';

let sim: RunningSimulator;
let dir: string;
let taken: net.Server;
beforeAll(async () => {
  sim = await startSimulator({ apps: 2, seed: 3 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-listen-taken-'));
  taken = net.createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
});
afterAll(async () => {
  taken.close();
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('says which address is taken and what to set, and exits 1', async () => {
  const { port } = taken.address() as net.AddressInfo;
  const listen = `127.0.0.1:${port}`;
  const configFile = writeConfig(
    dir,
    daemonConfigYaml(sim, {
      jobs: '{ maintenance: "off", jitter: 0s }',
      notify: LOG_CHANNEL_NOTIFY,
      server: `{ listen: "${listen}" }`,
    }),
  );
  const { code, stdout } = await runCli(['run', '--config', configFile], { env: { DMS_API_TOKEN: sim.adminToken } });
  expect(code).toBe(1);
  const fatal = jsonLogLines(stdout).filter((l) => l.level === 60);
  expect(fatal.map((l) => l.msg)).toEqual([
    `server.listen ${listen}: the address is in use (another deploy-watchdog, or another program, listens there): ` +
      'stop what listens there, or set server.listen to a free port (or "off")',
  ]);
}, 60_000);
