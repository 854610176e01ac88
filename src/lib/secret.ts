import { inspect } from 'node:util';

const REDACTED = '<secret>';

/**
 * A value that must never be printed: the API token, webhook URLs, the SMTP password.
 * It renders as `<secret>` through String(), JSON.stringify, util.inspect and pino; the value is
 * read only with `reveal()`, at the one place that sends it. Below every stage (lib/), so the API
 * client, the store and the channels take one without importing the config that reads it
 * (`config/secret.ts`).
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
   * say) with `<secret>`, for text that did not come through a Secret: each as is, and as a JSON
   * answer echoing it spells it (`"` and `\\` escaped, and `/` as `\\/`, as PHP writes it).
   */
  static scrub(text: string, secrets: readonly (Secret | undefined)[]): string {
    return Secret.scrubber(secrets)(text);
  }

  /**
   * {@link scrub} with the secrets' spellings worked out once, for a caller that scrubs every
   * answer it reads (the API client: 10,000 a cycle at 10,000 apps).
   */
  static scrubber(secrets: readonly (Secret | undefined)[]): (text: string) => string {
    const forms: string[] = [];
    for (const s of secrets) {
      const v = s?.reveal();
      if (!v || v.length < 4) continue;
      const json = JSON.stringify(v).slice(1, -1);
      forms.push(...new Set([v, json, json.replaceAll('/', '\\/')]));
    }
    return (text) => {
      let out = text;
      for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
      return out;
    };
  }
}
