/**
 * One JSON POST of a channel that speaks HTTP itself (the Alertmanager webhook, PagerDuty,
 * Opsgenie, Teams, Discord), in one place: its own time limit beside undici's, the start of the
 * answer's body read (scrubbed of the channel's secrets before anything cuts it) and the rest let
 * go, and a failure where no answer came named by its code alone: undici's messages can carry the
 * URL, which may be the credential.
 */
import { Agent, request, type Dispatcher } from '../../lib/undici-core.js';
import { Secret } from '../../lib/secret.js';
import type { Channel, ChannelDeps, Notification, SendResult } from './channel.js';
import { classifyHttpAnswer, classifyNetworkError, type HttpAnswer } from './classify.js';
import { resultGuard } from './guarded-send.js';

/** The start of an answer's body kept (for a reason, or a small JSON answer); the rest is not read. */
export const MAX_BODY_READ = 1024;

/** What came back. */
export interface HttpReply extends HttpAnswer {
  headers: Record<string, string | string[] | undefined>;
  /** The start of the body ({@link MAX_BODY_READ} bytes unless the request said), scrubbed of the channel's secrets. */
  body: string;
}

/** A request of a channel: the URL and headers revealed here only, at the moment of sending. */
export interface ChannelRequest {
  /** POST unless said. */
  method?: 'POST' | 'PUT' | 'PATCH' | undefined;
  url: string;
  /** Absent: none beyond the JSON content type. */
  headers?: Record<string, string> | undefined;
  /** Sent as JSON. */
  body: unknown;
  signal?: AbortSignal | undefined;
  /**
   * The start of the answer's body kept, in bytes, for a request whose answer is read whole (a
   * Discord message, whose id follows its embeds); absent: {@link MAX_BODY_READ}.
   */
  maxBodyRead?: number | undefined;
}

/**
 * The Secrets of a URL that is a credential (a webhook's), for scrubbing reasons and logs: the URL,
 * and the forms a library or a receiver may echo it in (re-serialised, its path and query, its
 * query alone, where a signature sits), and the parts a receiver may name alone ("invalid key …",
 * Laravel's "The route hooks/… could not be found"), encoded and decoded: each query value of 8
 * characters or more, and each path segment of 16 or more (a token; route words are shorter).
 */
export function urlSecrets(url: Secret): Secret[] {
  const parsed = new URL(url.reveal());
  const queryValues = parsed.search
    .slice(1)
    .split('&')
    .map((pair) => pair.slice(pair.indexOf('=') + 1))
    .filter((v) => v.length >= 8);
  const segments = parsed.pathname.split('/').filter((v) => v.length >= 16);
  const parts = new Set([...queryValues, ...segments].flatMap((v) => [v, decoded(v)]));
  return [url, ...[parsed.href, parsed.pathname + parsed.search, parsed.search, ...parts].map((v) => new Secret(v))];
}

/** A URL part percent-decoded, or as it is when it does not decode. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Reads the start of a body and lets the rest go. */
async function bodyStart(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length >= max) break;
  }
  // Breaking out of the loop destroys the stream: a long body is not read to its end.
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/** What an undici error carries that may be named: its code, never its message (it may hold the URL). */
export function undiciErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // Happy eyeballs: every address failed, each with its own error.
  const first = (err as { errors?: unknown[] } | null)?.errors?.[0];
  const inner = (first as { code?: unknown } | undefined)?.code;
  return typeof inner === 'string' ? inner : undefined;
}

/**
 * Classifies a failure where no answer came: our time limit, a request undici refused before
 * sending (a bad header: sending again fails the same way), or a network error.
 */
export function classifyFailure(err: unknown, timedOut: boolean, timeoutMs: number): SendResult {
  if (timedOut) return classifyNetworkError('ETIMEDOUT', timeoutMs);
  const code = undiciErrorCode(err);
  if (code?.startsWith('UND_ERR_INVALID')) {
    return { outcome: 'permanent', reason: `could not send the request (${code})` };
  }
  return classifyNetworkError(code, timeoutMs);
}

/**
 * The send and close of a channel speaking HTTP itself, its agent made here: each request within
 * the channel's `timeout` (no answer in time is retryable), each send guarded (`guarded-send.ts`:
 * stopped when the signal fires, its reason scrubbed, `peer` the one who answers: "PagerDuty"), a
 * throw classified as a failure where no answer came.
 */
export function httpChannelIo(
  config: { name: string; type: string; timeout: number },
  deps: Pick<ChannelDeps, 'logger' | 'clock'>,
  peer: string,
  secrets: readonly Secret[],
) {
  const log = deps.logger.child({ channel: config.name, kind: config.type });
  const timeoutMs = config.timeout;
  // One keep-alive pool per channel, its own timers a backstop to ours.
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  /** Sends and hands back the answer itself, or the SendResult of a failure where none came. */
  const postRaw = async (r: ChannelRequest): Promise<HttpReply | { failure: SendResult }> => {
    const timer = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(r.url, {
        method: r.method ?? 'POST',
        headers: { ...r.headers, 'content-type': 'application/json', 'user-agent': 'deploy-watchdog' },
        body: JSON.stringify(r.body),
        dispatcher: agent,
        signal: r.signal ? AbortSignal.any([r.signal, timer]) : timer,
      });
      // Scrubbed before a reason cuts it: a secret cut in half would no longer be found.
      const body = Secret.scrub(await bodyStart(res.body, r.maxBodyRead ?? MAX_BODY_READ), secrets);
      return { status: res.statusCode, headers: res.headers, body };
    } catch (err) {
      return { failure: classifyFailure(err, timer.aborted, timeoutMs) };
    }
  };
  return {
    /** Sends and reads the answer by the retry rules (`classify.ts`). */
    post: async (r: ChannelRequest): Promise<SendResult> => {
      const reply = await postRaw(r);
      return 'failure' in reply ? reply.failure : classifyHttpAnswer(reply, deps.clock.now());
    },
    postRaw,
    guarded: resultGuard({ peer, failed: (err) => classifyFailure(err, false, timeoutMs), secrets, log }),
    close: async () => {
      await agent.destroy();
    },
  };
}

/**
 * A channel that POSTs each rendered message to one address (a Slack or Teams webhook, an
 * Alertmanager receiver), through {@link httpChannelIo}: `request` says where and what.
 */
export function postingChannel<M>(
  config: { name: string; type: string; timeout: number },
  deps: Pick<ChannelDeps, 'logger' | 'clock'>,
  peer: string,
  secrets: readonly Secret[],
  parts: { render: (n: Notification) => M; request: (message: M) => Omit<ChannelRequest, 'signal'> },
): Channel<M> {
  const io = httpChannelIo(config, deps, peer, secrets);
  return {
    kind: config.type,
    // The request is aborted by our own timer after `timeout`.
    sendTimeoutMs: config.timeout,
    render: parts.render,
    send: (message, signal) => io.guarded(() => io.post({ ...parts.request(message), signal }), signal),
    close: io.close,
  };
}
