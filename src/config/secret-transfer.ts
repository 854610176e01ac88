/**
 * A parsed config (or any part of one) posted to another thread and taken back there whole: a
 * structured clone keeps plain objects, arrays and primitives, but a {@link Secret} arrives as an
 * empty object (its value is a private field). So each secret travels as a marked plain object
 * and becomes a Secret again on arrival. The value crosses in memory only, never a log or a file.
 */
import { Secret } from '../lib/secret.js';
import { isPlain, rebuilt } from './secret.js';

/** The key of a secret in transit; no key of the config's is spelt so. */
const MARK = '\u0000secret';

/** {@link secretTransfer.pack} and its inverse. */
export const secretTransfer = {
  /** `value` with every Secret a marked plain object: safe for `postMessage`. */
  pack(value: unknown): unknown {
    return rebuilt(value, (part) => (part instanceof Secret ? { [MARK]: part.reveal() } : undefined));
  },
  /** What {@link pack} made, with its secrets Secrets again. */
  unpack<T>(value: unknown): T {
    return rebuilt(value, (part) =>
      isPlain(part) && typeof part[MARK] === 'string' ? new Secret(part[MARK]) : undefined,
    ) as T;
  },
};
