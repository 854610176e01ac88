/**
 * Probes a listener from a thread of its own, as a kubelet would: each `GET` on a new connection,
 * closed after it, one path after the other, every `everyMs`. On its own thread because the
 * test's thread may be the one blocked (a store's statement in `Atomics.wait`, `pg_ctl` run
 * synchronously), and a probe timed there would count that block as the listener's.
 */
import { Worker } from 'node:worker_threads';

/** One answer a probe got (status 0: no answer, `body` then says why). */
export interface Probe {
  path: string;
  status: number;
  /** Date.now() when it was asked. */
  at: number;
  ms: number;
  body: string;
}

/** A running prober. */
export interface HttpProber {
  /** Stops it after the probe under way; resolves with every answer, in order. */
  done(): Promise<Probe[]>;
}

const PROBER = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const { port, paths, everyMs, timeoutMs, stop } = workerData;
const got = [];
const ask = (path) => new Promise((resolve) => {
  const at = Date.now();
  const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c) => (body += c));
    res.on('end', () => resolve({ path, status: res.statusCode, at, ms: Date.now() - at, body }));
    res.on('error', (err) => resolve({ path, status: 0, at, ms: Date.now() - at, body: err.message }));
  });
  req.on('timeout', () => req.destroy(new Error('no answer within ' + timeoutMs + 'ms')));
  req.on('error', (err) => resolve({ path, status: 0, at, ms: Date.now() - at, body: err.message }));
});
(async () => {
  let first = true;
  while (Atomics.load(stop, 0) === 0) {
    for (const path of paths) got.push(await ask(path));
    if (first) parentPort.postMessage('probing');
    first = false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  parentPort.postMessage(got);
})();
`;

/** Starts probing `paths` on loopback `port`; resolves once the first round is answered. */
export async function startHttpProber(
  port: number,
  paths: string[],
  options: { everyMs?: number; timeoutMs?: number } = {},
): Promise<HttpProber> {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const workerData = { port, paths, everyMs: options.everyMs ?? 100, timeoutMs: options.timeoutMs ?? 30_000, stop };
  const worker = new Worker(PROBER, { eval: true, workerData });
  // A test that fails before `done` leaves nothing that keeps its process alive.
  worker.unref();
  const messages: unknown[] = [];
  let heard: () => void = () => undefined;
  let failed: Error | undefined;
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      if (failed) reject(failed);
      else if (messages.length > 0) resolve(messages.shift());
      else heard = () => (failed ? reject(failed) : resolve(messages.shift()));
    });
  worker.on('message', (m) => {
    messages.push(m);
    heard();
  });
  worker.on('error', (err) => {
    failed = err;
    heard();
  });
  await next();
  return {
    done: async () => {
      Atomics.store(stop, 0, 1);
      try {
        return (await next()) as Probe[];
      } finally {
        await worker.terminate();
      }
    },
  };
}
