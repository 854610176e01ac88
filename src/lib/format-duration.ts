/**
 * A duration as a person reads it in a summary or a message: the two largest units, "2h 5m", "3d 4h", "45s".
 * Negative durations (clock skew between the service and us) read as "0s".
 */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = total;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${name}`);
    if (parts.length === 2) break;
  }
  const shown = parts.filter((p, i) => i === 0 || !p.startsWith('0'));
  return shown.length > 0 ? shown.join(' ') : '0s';
}
