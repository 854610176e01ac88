import net from 'node:net';

/**
 * Whether a host name or address can only mean this machine: `localhost`, an IPv4 address in
 * 127.0.0.0/8, `::1`, or an IPv4-mapped IPv6 form of one of those (brackets allowed). Another name
 * is not taken on trust, even one that resolves to loopback today: what it resolves to can change.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (bare === 'localhost') return true;
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  if (!net.isIPv6(bare)) return false;
  // The URL parser writes an IPv6 address in its one canonical form: ::1, ::ffff:7f00:1.
  const canonical = new URL(`http://[${bare}]/`).hostname;
  return canonical === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}
