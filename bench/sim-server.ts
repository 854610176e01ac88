/**
 * The simulator as a child process, so a benchmark measures the watchdog and not the service it
 * reads: `node --import tsx bench/sim-server.ts --apps 10000 [--seed 1] [--max-limit 1000]`.
 * Seeds, listens on an ephemeral loopback port and prints one readiness line on stdout:
 * `{"ready":true,"baseUrl":"http://127.0.0.1:PORT","adminToken":"…","stats":{…},"seedMs":…}`.
 * Controlled over `POST {baseUrl}/_sim/<method>`. Exits when its stdin closes (the parent died)
 * or on SIGTERM/SIGINT.
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { startSimulator } from '../packages/simulator/src/index.js';

const { values } = parseArgs({
  options: {
    apps: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    'max-limit': { type: 'string', default: '1000' },
  },
});

const started = performance.now();
const sim = await startSimulator({
  apps: Number(values.apps),
  seed: Number(values.seed),
  maxLimit: Number(values['max-limit']),
});
const seedMs = Math.round(performance.now() - started);
process.stdout.write(
  `${JSON.stringify({ ready: true, baseUrl: sim.baseUrl, adminToken: sim.adminToken, stats: sim.control.stats(), seedMs })}\n`,
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void sim.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent holds our stdin: when it goes away (even by SIGKILL), so do we.
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
