/**
 * One request (a POST, or a GET) sent from a thread of its own, when told: a test that blocks its own thread (as a
 * statement's `Atomics.wait` does) still has a client that sends and times the answer meanwhile.
 */
import { Worker } from 'node:worker_threads';

/** What the post got (status 0: no answer, `body` then says why). */
export interface ThreadPostResult {
  status: number;
  /** Date.now() when it was sent. */
  at: number;
  ms: number;
  body: string;
}

/** A post ready to go. */
export interface ThreadPost {
  /** Sends it `delayMs` from now; callable from a thread about to block. */
  go(): void;
  /** What it got. */
  result: Promise<ThreadPostResult>;
}

const POSTER = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const { url, headers, body, delayMs, flag, method, socketPath } = workerData;
parentPort.postMessage('ready');
Atomics.wait(flag, 0, 0);
setTimeout(() => {
  const at = Date.now();
  const req = http.request(url, { method, headers, agent: false, ...(socketPath ? { socketPath } : {}) }, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c) => (text += c));
    res.on('end', () => parentPort.postMessage({ status: res.statusCode, at, ms: Date.now() - at, body: text }));
  });
  req.on('error', (err) => parentPort.postMessage({ status: 0, at, ms: Date.now() - at, body: err.message }));
  req.end(method === 'GET' ? undefined : body);
}, delayMs);
`;

/** Starts the thread; resolves once it waits for {@link ThreadPost.go}. */
export async function threadPost(o: {
  url: string;
  headers: Record<string, string>;
  body: string;
  delayMs: number;
  /** Default POST. */
  method?: 'GET' | 'POST';
  /** A unix socket to send it on (a relay's), `url` then giving its path and host. */
  socketPath?: string;
}): Promise<ThreadPost> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(POSTER, { eval: true, workerData: { method: 'POST', ...o, flag } });
  const messages: unknown[] = [];
  let heard: (() => void) | undefined;
  worker.on('message', (m: unknown) => {
    messages.push(m);
    heard?.();
  });
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      const look = () => {
        if (messages.length > 0) resolve(messages.shift());
        else heard = look;
      };
      worker.once('error', reject);
      look();
    });
  await next();
  return {
    go: () => {
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    },
    result: next().then(async (m) => {
      await worker.terminate();
      return m as ThreadPostResult;
    }),
  };
}
