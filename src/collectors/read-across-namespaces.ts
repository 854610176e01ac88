/**
 * Calls `read` once per configured namespace (with its code) and concatenates the results in
 * namespace order; with no namespaces configured, calls it once without one. Namespaces are read
 * one after another: each read already pages, and the rate limiter is shared anyway.
 */
export async function readAcrossNamespaces<T>(
  ctx: { readonly namespaces: readonly string[] | null },
  read: (namespace: string | undefined) => Promise<T[]>,
): Promise<T[]> {
  if (ctx.namespaces === null) return read(undefined);
  const out: T[] = [];
  for (const ns of ctx.namespaces) {
    for (const item of await read(ns)) out.push(item);
  }
  return out;
}
