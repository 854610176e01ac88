/**
 * Answers the person who clicked, seen by them alone (an ephemeral message at the click's
 * `response_url`): what was done, or why nothing was. The URL is a credential of sorts (anyone
 * holding it may post into the conversation for half an hour): it is never logged or stored, and a
 * click's URL is used only when it points at Slack (`https://hooks.slack.com`) or at the configured
 * Web API root's own host (a test's fake Slack), so a forged payload cannot make the daemon post
 * anywhere else.
 */
import { request } from '../lib/undici-core.js';
import { errorText } from '../lib/error-text.js';
import { escapeMrkdwn } from '../notify/channels/escape.js';
import { SLACK_LIMITS } from '../notify/channels/slack-limits.js';

/** Where Slack's response URLs point. */
const SLACK_HOOKS_ORIGIN = 'https://hooks.slack.com';

/** Answers at a response URL one can trust to be Slack's. */
export class SlackResponder {
  readonly #origins: ReadonlySet<string>;

  /** `apiUrls`: the Web API roots configured (their hosts may also answer); `timeoutMs`: the most one answer may take. */
  constructor(
    apiUrls: readonly string[],
    private readonly timeoutMs: number,
  ) {
    this.#origins = new Set([SLACK_HOOKS_ORIGIN, ...apiUrls.map((u) => new URL(u).origin)]);
  }

  /** Posts `text` (plain words: escaped here) to the person who clicked. Never throws. */
  async answer(responseUrl: string | undefined, text: string): Promise<{ ok: true } | { ok: false; reason: string }> {
    if (!responseUrl) return { ok: false, reason: 'the click came without a response_url' };
    let url: URL;
    try {
      url = new URL(responseUrl);
    } catch {
      return { ok: false, reason: 'the response_url is not a URL' };
    }
    if (!this.#origins.has(url.origin)) return { ok: false, reason: 'the response_url does not point at Slack' };
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({
          response_type: 'ephemeral',
          replace_original: false,
          text: escapeMrkdwn(text, SLACK_LIMITS.text),
        }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300
        ? { ok: true }
        : { ok: false, reason: `Slack answered HTTP ${res.statusCode}` };
    } catch (err) {
      // Undici's errors name the host at most, never the path that holds the token.
      return { ok: false, reason: errorText(err).replaceAll(url.pathname, '/…') };
    }
  }
}
