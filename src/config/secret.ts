import { inspect } from 'node:util';
import { z } from 'zod';

const REDACTED = '<secret>';

/**
 * A value that must never be printed: the API token, webhook URLs, the SMTP password.
 * It renders as `<secret>` through String(), JSON.stringify, util.inspect and pino; the value is
 * read only with `reveal()`, at the one place that sends it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The secret value itself; call it only where the value is sent. */
  reveal(): string {
    return this.#value;
  }

  /** True when the value is empty. */
  get isEmpty(): boolean {
    return this.#value.length === 0;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }

  /**
   * Replaces every occurrence of the given secrets in a text (an error message from a library,
   * say) with `<secret>`, for text that did not come through a Secret.
   */
  static scrub(text: string, secrets: readonly (Secret | undefined)[]): string {
    let out = text;
    for (const s of secrets) {
      const v = s?.reveal();
      if (v && v.length >= 4) out = out.split(v).join(REDACTED);
    }
    return out;
  }
}

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
