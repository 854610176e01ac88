/**
 * The value of `key` in `map` (a Map, or a WeakMap cache); when it has none, the one `make` answers,
 * stored first. How things are gathered by a key: `getOrAdd(byChannel, channel, () => []).push(row)`.
 */
export function getOrAdd<K, V>(map: { get(k: K): V | undefined; set(k: K, v: V): void }, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}
