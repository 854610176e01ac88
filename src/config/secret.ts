/**
 * The config file's secrets: the schemas that read a secret string (or a URL that is one) into a
 * {@link Secret}, and every one of them in a parsed config.
 */
import { z } from 'zod';
import { Secret } from '../lib/secret.js';
import { valueAt } from '../lib/value-at.js';
import { nonEmptySchema } from './schema-blocks.js';

/**
 * Every {@link Secret} in a parsed config (or any part of one), each once: the values at its
 * {@link secretPaths}, what text from outside is scrubbed of, whichever secret it happens to echo.
 */
export function secretsIn(value: unknown): Secret[] {
  return [...new Set(secretPaths(value).map((p) => valueAt(value, p) as Secret))];
}

/** The key path of every {@link Secret} in a parsed config (or any part of one), in document order. */
export function secretPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (value instanceof Secret) return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => secretPaths(v, [...at, i]));
  if (!isPlain(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => secretPaths(v, [...at, k]));
}

/**
 * `value` rebuilt through its arrays and plain objects (a parsed config's containers), each part
 * first offered to `change`: what it answers stands for the part; undefined, the part is walked.
 */
export function rebuilt(value: unknown, change: (part: unknown) => unknown): unknown {
  const changed = change(value);
  if (changed !== undefined) return changed;
  if (Array.isArray(value)) return value.map((v) => rebuilt(v, change));
  if (!isPlain(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebuilt(v, change)]));
}

/** A plain object: `{…}` as data is written, never an instance of a class (a Secret, a Date). */
export function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Config schema of a secret string: a non-empty string in the file, a {@link Secret} once parsed. */
export const secretSchema = nonEmptySchema.transform((value) => new Secret(value));

/**
 * Config schema of a URL that is itself a credential: checked to be `what` (a URL of `protocol`,
 * like `example` when one is given) before it becomes a {@link Secret}, with messages that never
 * show it. A URL in the JSON Schema (`format: uri`, with the example), so editors and `validate`'s
 * stand-ins know it for one.
 */
export function secretUrlOf(protocol: RegExp, what: string, example?: string) {
  const url = z.url({
    protocol,
    error: (iss) =>
      iss.input === undefined
        ? 'is required'
        : typeof iss.input !== 'string'
          ? `must be a string (${what})`
          : iss.input === ''
            ? 'must not be empty'
            : `must be ${what}${example ? ` such as ${example}` : ''} (value not shown: it is a secret)`,
  });
  return (example ? url.meta({ examples: [example] }) : url).pipe(secretSchema);
}

/** A secret http(s) URL (a webhook, a heartbeat ping URL). */
export const secretUrlSchema = secretUrlOf(/^https?$/, 'an http(s) URL');
