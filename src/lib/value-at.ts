/** The value at `path` within plain data; undefined where the path leads nowhere. */
export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let node = data;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/**
 * `data` with the value at `path` set, in place, where the path leads into an object (the data is
 * the caller's own to change); `value` itself for an empty path.
 */
export function setAt(data: unknown, path: readonly PropertyKey[], value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = valueAt(data, path.slice(0, -1));
  if (typeof parent === 'object' && parent !== null) (parent as Record<PropertyKey, unknown>)[path.at(-1)!] = value;
  return data;
}
