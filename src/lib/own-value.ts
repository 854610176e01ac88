/**
 * `table[key]` when `key` is one of the table's own keys, else undefined. For a plain-object table
 * looked up by a word from outside (the service, Slack, the config): `constructor`, `toString` or
 * `__proto__` must find nothing of the object's prototype.
 */
export function ownValue<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
