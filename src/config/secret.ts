/**
 * The config file's secrets: the schemas that read a secret string (or a URL that is one) into a
 * {@link Secret}, and every one of them in a parsed config.
 */
import { z } from 'zod';
import { Secret } from '../lib/secret.js';

/**
 * Every {@link Secret} in a parsed config (or any part of one), each once: what text from outside
 * is scrubbed of, whichever secret it happens to echo.
 */
export function secretsIn(value: unknown, found: Set<Secret> = new Set()): Secret[] {
  if (value instanceof Secret) found.add(value);
  else if (Array.isArray(value)) for (const v of value) secretsIn(v, found);
  else if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype)
    for (const v of Object.values(value)) secretsIn(v, found);
  return [...found];
}

/** Config schema of a secret string: a non-empty string in the file, a {@link Secret} once parsed. */
export const secretSchema = z
  .string()
  .min(1, 'must not be empty')
  .transform((value) => new Secret(value));

/**
 * Config schema of a URL that is itself a credential (a webhook, a heartbeat ping URL): checked
 * to be an http(s) URL before it becomes a {@link Secret}, with a message that never shows it. A
 * URL in the JSON Schema (`format: uri`), so editors and `validate`'s stand-ins know it for one.
 */
export const secretUrlSchema = z
  .url({
    protocol: /^https?$/,
    error: (iss) =>
      iss.input === undefined
        ? 'is required'
        : typeof iss.input !== 'string'
          ? 'must be a string (an http(s) URL)'
          : iss.input === ''
            ? 'must not be empty'
            : 'must be an http(s) URL (value not shown: it is a secret)',
  })
  .pipe(secretSchema);
