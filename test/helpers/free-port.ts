import { createServer } from 'node:net';

/**
 * A loopback port nobody listens on right now, for a config that needs a fixed one (the config
 * refuses port 0). Another process may take it before the test does; none of ours do.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
