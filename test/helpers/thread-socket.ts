/**
 * Slack's side of a Socket Mode connection on a thread of its own: a WebSocket server on loopback
 * that greets each connection with `hello`, and sends an envelope when told, timing the client's
 * acknowledgement from there. A test that blocks its own thread (as a statement's `Atomics.wait`
 * blocks the daemon's) still has a peer that sends and sees the ack meanwhile. The fake Slack Web
 * API hands out its address (`SlackApi.handSocketsTo`).
 */
import { Worker } from 'node:worker_threads';

/** When the envelope went, and how long its acknowledgement took. */
export interface ThreadSocketAck {
  /** Date.now() when it was sent. */
  at: number;
  ms: number;
}

/** The peer, running. */
export interface ThreadSocket {
  /** The address to hand out (`ws://127.0.0.1:PORT/`). */
  url: string;
  /** Resolves once `n` connections were greeted (default 1). */
  connected(n?: number): Promise<void>;
  /** Sends `envelope` (its id `envelopeId`) `delayMs` from now; callable from a thread about to block. */
  send(envelope: string, envelopeId: string, delayMs: number): Promise<ThreadSocketAck>;
  close(): Promise<void>;
}

const PEER = `
const { workerData, parentPort } = require('node:worker_threads');
const { WebSocketServer } = require('node:module').createRequire(workerData.from)('ws');
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
let current;
let connections = 0;
const waiting = new Map();
wss.on('listening', () => parentPort.postMessage({ type: 'listening', port: wss.address().port }));
wss.on('connection', (ws) => {
  current = ws;
  ws.on('message', (data) => {
    let id;
    try { id = JSON.parse(String(data)).envelope_id; } catch { return; }
    const sent = waiting.get(id);
    if (!sent) return;
    waiting.delete(id);
    parentPort.postMessage({ type: 'acked', id, at: sent, ms: Date.now() - sent });
  });
  ws.send(JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0LOCAL' } }));
  parentPort.postMessage({ type: 'connected', n: ++connections });
});
parentPort.on('message', (m) => {
  if (m.type === 'close') {
    for (const ws of wss.clients) ws.terminate();
    wss.close(() => parentPort.postMessage({ type: 'closed' }));
    return;
  }
  setTimeout(() => {
    waiting.set(m.id, Date.now());
    current.send(m.envelope);
  }, m.delayMs);
});
`;

/** Starts the peer; resolves once it listens. */
export async function startThreadSocket(): Promise<ThreadSocket> {
  const worker = new Worker(PEER, { eval: true, workerData: { from: import.meta.url } });
  let greeted = 0;
  const listeners = new Set<(m: { type: string; [k: string]: unknown }) => void>();
  worker.on('message', (m: { type: string; n?: number }) => {
    if (m.type === 'connected') greeted = m.n ?? greeted;
    for (const l of [...listeners]) l(m);
  });
  const when = <T>(pick: (m: { type: string; [k: string]: unknown }) => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const l = (m: { type: string; [k: string]: unknown }) => {
        const got = pick(m);
        if (got === undefined) return;
        listeners.delete(l);
        resolve(got);
      };
      listeners.add(l);
    });
  const port = await when((m) => (m.type === 'listening' ? (m.port as number) : undefined));
  return {
    url: `ws://127.0.0.1:${port}/`,
    connected: (n = 1) =>
      greeted >= n
        ? Promise.resolve()
        : when((m) => (m.type === 'connected' && (m.n as number) >= n ? true : undefined)).then(() => undefined),
    send: (envelope, envelopeId, delayMs) => {
      const acked = when((m) =>
        m.type === 'acked' && m.id === envelopeId ? { at: m.at as number, ms: m.ms as number } : undefined,
      );
      worker.postMessage({ type: 'send', envelope, id: envelopeId, delayMs });
      return acked;
    },
    close: async () => {
      const closed = when((m) => (m.type === 'closed' ? true : undefined));
      worker.postMessage({ type: 'close' });
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      await worker.terminate();
    },
  };
}
