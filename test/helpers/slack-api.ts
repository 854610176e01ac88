/**
 * A fake of Slack's Web API for tests, over real HTTP on loopback: `auth.test`,
 * `chat.postMessage` (thread replies, `reply_broadcast`, `metadata`), `chat.update` and
 * `conversations.history` (with `include_all_metadata`), taking bodies form-encoded (as
 * @slack/web-api sends them, JSON fields as strings) or as JSON. It keeps the channel's messages as
 * Slack would, answers Slack's error words and rate limits on demand, and records every call
 * (never the token: only whether it was the right one).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { slackRefusal, type SlackLikePayload } from '../../src/demo/peers/webhook-receiver.js';

/** Options of {@link startSlackApi}. */
export interface SlackApiOptions {
  /** The bot token it accepts; any other is `invalid_auth`. */
  token: string;
  /** The channel IDs that exist with the app in them (default `C0ALERTS`). */
  channels?: readonly string[];
  /** The time a message's `ts` is made of, in ms (default the real time): tests on a ManualClock pass it. */
  now?: () => number;
}

/** One call as the fake saw it. */
export interface SlackApiCall {
  method: string;
  /** The arguments, JSON fields parsed; the token never kept. */
  args: Record<string, unknown>;
  /** How the body came: `form` (what @slack/web-api sends) or `json`. */
  encoding: 'form' | 'json';
  /** Whether it carried the right token. */
  authorized: boolean;
  /** What was answered: HTTP status and Slack's error word, if any. */
  status: number;
  error?: string;
}

/** A message as the fake keeps it. */
export interface SlackApiMessage {
  channel: string;
  ts: string;
  text?: string;
  blocks?: unknown[];
  attachments?: { color?: string; blocks?: unknown[] }[];
  metadata?: { event_type: string; event_payload?: Record<string, unknown> };
  thread_ts?: string;
  reply_broadcast?: boolean;
  /** How many times `chat.update` changed it. */
  edits: number;
  deleted: boolean;
}

/** What the next calls of a method get instead of their answer. */
type Trouble =
  | { kind: 'error'; error: string; extra: Record<string, unknown> }
  | { kind: 'raw'; status: number; body: string; headers: Record<string, string> }
  | { kind: 'rateLimit'; seconds: number }
  | { kind: 'hold'; keep: boolean };

/** A running fake Slack Web API. */
export interface SlackApi {
  /** The API root to give `api_url` (ends in `/api/`). */
  readonly url: string;
  readonly calls: SlackApiCall[];
  /** The calls of one method. */
  callsOf(method: string): SlackApiCall[];
  /** Every message posted and not deleted, oldest first (thread replies among them). */
  messages(channel?: string): SlackApiMessage[];
  /** The messages shown in the channel itself (not thread replies, unless broadcast). */
  inChannel(channel?: string): SlackApiMessage[];
  /** The replies in a message's thread, oldest first. */
  replies(ts: string, channel?: string): SlackApiMessage[];
  /** The next `times` calls of `method` answer Slack's error word (HTTP 200, `ok: false`), with `extra` fields. */
  failNext(method: string, error: string, options?: { times?: number; extra?: Record<string, unknown> }): void;
  /** The next call of `method` gets this answer as it stands (a 500, a 429 without Retry-After, a body Slack would not send). */
  answerNext(method: string, status: number, body: string, headers?: Record<string, string>): void;
  /** The next `times` calls of `method` answer HTTP 429 with `Retry-After: seconds`. */
  rateLimitNext(method: string, seconds: number, times?: number): void;
  /**
   * The next call of `method` is never answered: with `keep`, a post is kept first (Slack took it,
   * and the answer never came back); without, it is dropped (it never arrived).
   */
  holdNext(method: string, options: { keep: boolean }): void;
  /** Resolves when a held call has come in. */
  held(): Promise<void>;
  /** Deletes a message, as someone in Slack may. */
  deleteMessage(ts: string, channel?: string): void;
  close(): Promise<void>;
}

/** Fields of a form-encoded body that hold JSON (as @slack/web-api sends objects and arrays). */
const JSON_FIELDS = new Set(['blocks', 'attachments', 'metadata']);
const DEFAULT_CHANNEL = 'C0ALERTS';

/** Starts the fake on loopback. */
export async function startSlackApi(options: SlackApiOptions): Promise<SlackApi> {
  const channels = new Set(options.channels ?? [DEFAULT_CHANNEL]);
  const now = options.now ?? Date.now;
  const calls: SlackApiCall[] = [];
  const messages: SlackApiMessage[] = [];
  const troubles = new Map<string, Trouble[]>();
  let lastTs = 0;
  let heldNotify: (() => void) | undefined;
  let heldPromise: Promise<void> = new Promise((resolve) => (heldNotify = resolve));

  /** A ts as Slack makes them: seconds, a dot, six digits, always increasing. */
  const nextTs = (): string => {
    const micros = Math.max(Math.floor(now()) * 1000, lastTs + 1);
    lastTs = micros;
    return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
  };
  const find = (channel: unknown, ts: unknown) =>
    messages.find((m) => m.channel === channel && m.ts === ts && !m.deleted);

  const methods: Record<string, (a: Record<string, unknown>) => { error: string } | Record<string, unknown>> = {
    'auth.test': () => ({
      url: 'https://local.slack.invalid/',
      team: 'Local',
      user: 'watchdog',
      team_id: 'T0LOCAL',
      user_id: 'U0BOT',
      bot_id: 'B0BOT',
    }),
    'chat.postMessage': (a) => {
      const channel = String(a.channel ?? '');
      if (!channels.has(channel)) return { error: 'channel_not_found' };
      const refusal = refusalOf(a);
      if (refusal) return { error: refusal };
      if (a.thread_ts !== undefined && !find(channel, a.thread_ts)) return { error: 'thread_not_found' };
      const m: SlackApiMessage = {
        channel,
        ts: nextTs(),
        ...content(a),
        ...(a.metadata ? { metadata: a.metadata as SlackApiMessage['metadata'] } : {}),
        ...(a.thread_ts ? { thread_ts: String(a.thread_ts) } : {}),
        ...(isTrue(a.reply_broadcast) ? { reply_broadcast: true } : {}),
        edits: 0,
        deleted: false,
      };
      messages.push(m);
      return { channel, ts: m.ts, message: { text: m.text } };
    },
    'chat.update': (a) => {
      if (!channels.has(String(a.channel ?? ''))) return { error: 'channel_not_found' };
      const m = find(a.channel, a.ts);
      if (!m) return { error: 'message_not_found' };
      const refusal = refusalOf(a);
      if (refusal) return { error: refusal };
      Object.assign(m, content(a));
      m.edits++;
      return { channel: m.channel, ts: m.ts, text: m.text };
    },
    'conversations.history': (a) => {
      const channel = String(a.channel ?? '');
      if (!channels.has(channel)) return { error: 'channel_not_found' };
      const oldest = Number(a.oldest ?? 0);
      const limit = Math.min(Number(a.limit ?? 100), 1000);
      const from = Number(a.cursor ?? 0);
      const all = messages
        .filter((m) => m.channel === channel && !m.deleted && (!m.thread_ts || m.reply_broadcast))
        .filter((m) => Number(m.ts) > oldest)
        .reverse();
      const page = all.slice(from, from + limit);
      const withMetadata = isTrue(a.include_all_metadata);
      const more = from + limit < all.length;
      return {
        messages: page.map(({ metadata, edits: _e, deleted: _d, ...m }) => ({
          type: 'message',
          ...m,
          ...(withMetadata && metadata ? { metadata } : {}),
        })),
        has_more: more,
        response_metadata: { next_cursor: more ? String(from + limit) : '' },
      };
    },
  };

  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const match = /^\/api\/([a-zA-Z.]+)$/.exec(req.url ?? '');
    const method = match?.[1];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const json = (req.headers['content-type'] ?? '').startsWith('application/json');
    const args = json ? (JSON.parse(body || '{}') as Record<string, unknown>) : formArgs(body);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorized = (bearer ?? args.token) === options.token;
    delete args.token;
    const call: SlackApiCall = {
      method: method ?? req.url ?? '',
      args,
      encoding: json ? 'json' : 'form',
      authorized,
      status: 200,
    };
    calls.push(call);
    const reply = (status: number, result: Record<string, unknown>, headers?: Record<string, string>) => {
      call.status = status;
      if (result.ok === false) call.error = String(result.error);
      answer(res, status, result, headers);
    };
    if (req.method !== 'POST' || !method || !methods[method]) return reply(404, { ok: false, error: 'unknown_method' });
    if (!authorized) return reply(200, { ok: false, error: bearer || args.token ? 'invalid_auth' : 'not_authed' });
    const trouble = troubles.get(method)?.shift();
    if (trouble?.kind === 'rateLimit') {
      return reply(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(trouble.seconds) });
    }
    if (trouble?.kind === 'error') return reply(200, { ok: false, error: trouble.error, ...trouble.extra });
    if (trouble?.kind === 'raw') {
      call.status = trouble.status;
      res.writeHead(trouble.status, { 'content-type': 'application/json; charset=utf-8', ...trouble.headers });
      return res.end(trouble.body);
    }
    if (trouble?.kind === 'hold') {
      call.status = 0;
      if (trouble.keep) methods[method](args);
      heldNotify?.();
      return; // never answered; close() drops the connection
    }
    const result = methods[method](args);
    reply(200, 'error' in result ? { ok: false, ...result } : { ok: true, ...result });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => answer(res, 500, { ok: false, error: 'fatal_error' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const push = (method: string, trouble: Trouble, times: number) =>
    troubles.set(method, [...(troubles.get(method) ?? []), ...Array.from({ length: times }, () => trouble)]);
  const live = (channel: string) => messages.filter((m) => m.channel === channel && !m.deleted);

  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    callsOf: (method) => calls.filter((c) => c.method === method),
    messages: (channel = DEFAULT_CHANNEL) => live(channel),
    inChannel: (channel = DEFAULT_CHANNEL) => live(channel).filter((m) => !m.thread_ts || m.reply_broadcast),
    replies: (ts, channel = DEFAULT_CHANNEL) => live(channel).filter((m) => m.thread_ts === ts),
    failNext: (method, error, o = {}) => push(method, { kind: 'error', error, extra: o.extra ?? {} }, o.times ?? 1),
    answerNext: (method, status, body, headers = {}) => push(method, { kind: 'raw', status, body, headers }, 1),
    rateLimitNext: (method, seconds, times = 1) => push(method, { kind: 'rateLimit', seconds }, times),
    holdNext: (method, o) => {
      heldPromise = new Promise((resolve) => (heldNotify = resolve));
      push(method, { kind: 'hold', keep: o.keep }, 1);
    },
    held: () => heldPromise,
    deleteMessage: (ts, channel = DEFAULT_CHANNEL) => {
      const m = find(channel, ts);
      if (m) m.deleted = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A form-encoded body's arguments, the JSON fields parsed. */
function formArgs(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    out[key] = JSON_FIELDS.has(key) ? (JSON.parse(value) as unknown) : value;
  }
  return out;
}

function isTrue(value: unknown): boolean {
  return value === true || value === 'true' || value === '1';
}

/** The shown parts of a message. */
function content(a: Record<string, unknown>): Pick<SlackApiMessage, 'text' | 'blocks' | 'attachments'> {
  return {
    ...(a.text !== undefined ? { text: String(a.text) } : {}),
    ...(Array.isArray(a.blocks) ? { blocks: a.blocks as unknown[] } : {}),
    ...(Array.isArray(a.attachments) ? { attachments: a.attachments as SlackApiMessage['attachments'] } : {}),
  };
}

/** Why Slack would refuse the message or one of its attachments, or undefined. */
function refusalOf(a: Record<string, unknown>): string | undefined {
  if (a.metadata !== undefined) {
    const m = a.metadata as { event_type?: unknown; event_payload?: unknown };
    if (typeof m.event_type !== 'string' || typeof m.event_payload !== 'object') return 'invalid_metadata_format';
  }
  const parts = [a, ...((a.attachments as SlackLikePayload[] | undefined) ?? [])] as SlackLikePayload[];
  for (const part of parts) {
    if (part === a && part.text === undefined && part.blocks === undefined) return 'no_text';
    const refusal = part === a || part.blocks ? slackRefusal({ text: '', ...part }) : null;
    if (refusal) return refusal;
  }
  return undefined;
}
