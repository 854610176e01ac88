/**
 * `server.listen` read as an address: what the listener binds, what `healthcheck` asks and what
 * the console's section (`console-config.ts`) judges loopback. Beside the config that states it,
 * so none of them imports the listener for it.
 */

/** Where to listen: `127.0.0.1:9464`, `[::1]:9464`, `:9464` (all interfaces). */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(listen.trim());
  if (!m) throw new Error(`listen address must be HOST:PORT, got "${listen}"`);
  const port = Number(m[3]);
  if (port > 65_535) throw new Error(`listen port must be at most 65535, got ${port}`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}
