/**
 * A parsed config (or any part of one) posted to another thread and taken back there whole: a
 * structured clone keeps plain objects, arrays and primitives, but a {@link Secret} arrives as an
 * empty object (its value is a private field). So each secret travels as a marked plain object
 * and becomes a Secret again on arrival. The value crosses in memory only, never a log or a file.
 */
import { Secret } from '../lib/secret.js';

/** The key of a secret in transit; no key of the config's is spelt so. */
const MARK = '\u0000secret';

/** {@link secretTransfer.pack} and its inverse. */
export const secretTransfer = {
  /** `value` with every Secret a marked plain object: safe for `postMessage`. */
  pack(value: unknown): unknown {
    if (value instanceof Secret) return { [MARK]: value.reveal() };
    if (Array.isArray(value)) return value.map((v) => secretTransfer.pack(v));
    if (isPlain(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, secretTransfer.pack(v)]));
    return value;
  },
  /** What {@link pack} made, with its secrets Secrets again. */
  unpack<T>(value: unknown): T {
    return unpacked(value) as T;
  },
};

function unpacked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unpacked);
  if (!isPlain(value)) return value;
  const secret = value[MARK];
  if (typeof secret === 'string') return new Secret(secret);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unpacked(v)]));
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
