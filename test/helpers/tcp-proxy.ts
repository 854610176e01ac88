/**
 * A TCP proxy on loopback between one client and a server (a replica and PostgreSQL), so a test
 * can cut that client's connections as a network partition would, while every other client still
 * reaches the server directly. Cut: every connection through it is destroyed and new ones are
 * refused; restored: it listens again on the same port. Hung: the server reachable but silent, as
 * behind a network that drops packets: nothing is forwarded either way, connections stay open
 * (neither end hears of the other's close), new ones are accepted and never answered; restored
 * from that, the hung connections are reset, as a network that heals does to them.
 *
 * It forwards on a worker thread of its own: a store in the test's thread reaches PostgreSQL
 * synchronously (its main thread blocks per statement), and a proxy on that same thread would
 * never get to forward the statement it waits for.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

/** A running proxy. */
export interface TcpProxy {
  /** The loopback port clients connect to. */
  readonly port: number;
  /** `url` (a postgres:// URL, say) with its port replaced by the proxy's. */
  via(url: string): string;
  /** Destroys every connection through the proxy and refuses new ones. */
  cut(): Promise<void>;
  /** Forwards nothing more, either way, and closes nothing (see the file's comment). */
  hang(): Promise<void>;
  /** Listens again on the same port (after a cut), or forwards again after resetting what hung (after a hang). */
  restore(): Promise<void>;
  /** Bytes the client side has sent through the proxy so far (its requests, its statements). */
  sent(): Promise<number>;
  close(): Promise<void>;
}

/** The worker: answers each command ('cut', 'hang', 'restore', 'stats') with the port it listens on (0: none) and the bytes clients sent. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const sockets = new Set();
let server;
let port = 0;
let sent = 0;
let hung = false;
const track = (s) => {
  sockets.add(s);
  s.on('close', () => sockets.delete(s));
  s.on('error', () => s.destroy());
};
const hang = () => {
  hung = true;
  for (const s of sockets) {
    s.unpipe();
    s.pause();
  }
};
const listen = () => new Promise((resolve, reject) => {
  server = net.createServer((client) => {
    track(client);
    // Hung: accepted, and never answered.
    if (hung) return client.pause();
    const upstream = net.connect(workerData.target, '127.0.0.1');
    track(upstream);
    client.on('data', (chunk) => (sent += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => hung || upstream.destroy());
    upstream.on('close', () => hung || client.destroy());
  });
  server.once('error', reject);
  server.listen(port, '127.0.0.1', () => resolve(server.address().port));
});
const cut = () => new Promise((resolve) => {
  for (const s of sockets) s.destroy();
  const s = server;
  server = undefined;
  if (!s) return resolve();
  s.close(() => resolve());
});
parentPort.on('message', async (command) => {
  if (command === 'hang') hang();
  if (command === 'restore' && hung) {
    for (const s of sockets) s.resetAndDestroy();
    hung = false;
  }
  if (command === 'restore' && !server) port = await listen();
  if (command === 'cut') await cut();
  parentPort.postMessage({ port: server ? port : 0, sent });
});
`;

/** Starts a proxy that forwards to `127.0.0.1:targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const worker = new Worker(WORKER, { eval: true, workerData: { target: targetPort } });
  worker.unref();
  const ask = async (command: 'cut' | 'hang' | 'restore' | 'stats'): Promise<{ port: number; sent: number }> => {
    worker.postMessage(command);
    const [answer] = (await once(worker, 'message')) as [{ port: number; sent: number }];
    return answer;
  };
  const { port } = await ask('restore');
  let closed = false;
  return {
    port,
    via: (url) => {
      const u = new URL(url);
      u.port = String(port);
      return u.href;
    },
    cut: async () => {
      await ask('cut');
    },
    hang: async () => {
      await ask('hang');
    },
    restore: async () => {
      await ask('restore');
    },
    sent: async () => (await ask('stats')).sent,
    close: async () => {
      if (closed) return;
      closed = true;
      await ask('cut');
      await worker.terminate();
    },
  };
}
