/**
 * The value of `key` in `map`; when it has none, the one `make` answers, stored first. How things
 * are gathered by a key: `getOrAdd(byChannel, channel, () => []).push(row)`.
 */
export function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}
