/**
 * A fake of Slack's Web API for tests, over real HTTP on loopback: `auth.test`,
 * `chat.postMessage` (thread replies, `reply_broadcast`, `metadata`), `chat.update`,
 * `conversations.history` (with `include_all_metadata`) and `usergroups.users.list`, taking bodies
 * form-encoded (as @slack/web-api sends them, JSON fields as strings) or as JSON. It keeps the
 * channel's messages as Slack would (refusing blocks Slack would refuse: buttons, menus and their
 * limits included), answers Slack's error words and rate limits on demand, and records every call
 * (never the token: only whether it was the right one).
 *
 * And Slack's side of the buttons: Socket Mode (`apps.connections.open` with the app-level token,
 * then a WebSocket on loopback speaking Slack's envelope protocol: `hello`, an `interactive`
 * envelope with its `envelope_id` and a `block_actions` payload, the client's ack by that id,
 * `disconnect`), the same payload posted over HTTP signed as Slack signs it, and each click's
 * `response_url`, whose answers it keeps.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { WebSocketServer, type WebSocket } from 'ws';
import { slackSignature } from '../../src/interactions/slack-signature.js';
import { slackRefusal, type SlackLikePayload } from '../../packages/simulator/src/demo/peers/webhook-receiver.js';

/** Options of {@link startSlackApi}. */
export interface SlackApiOptions {
  /** The bot token it accepts; any other is `invalid_auth`. */
  token: string;
  /** The channel IDs that exist with the app in them (default `C0ALERTS`). */
  channels?: readonly string[];
  /** The time a message's `ts` is made of, in ms (default the real time): tests on a ManualClock pass it. */
  now?: () => number;
  /** The app-level token `apps.connections.open` accepts (Socket Mode); absent: none is. */
  appToken?: string;
  /** The members of each user group, by ID (`usergroups.users.list`); any other ID is `no_such_subteam`. */
  usergroups?: Record<string, string[]>;
}

/** A click as a test makes it: who, on which message, which button (found by its label). */
export interface ClickSpec {
  user: { id: string; username?: string };
  /** The message clicked (its channel and ts). */
  message: Pick<SlackApiMessage, 'channel' | 'ts'>;
  /** What the button hands back (its `value`), or the option chosen in a menu (`viaMenu`). */
  value: string;
  viaMenu?: boolean;
}

/** What the daemon answered at a click's response URL. */
export interface ClickAnswer {
  response_type?: string;
  replace_original?: boolean;
  text: string;
}

/** A click made, and what the daemon answered it (resolves when it does). */
export interface Click {
  answer: Promise<ClickAnswer>;
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
  | { kind: 'hold'; keep: boolean }
  | { kind: 'pass' };

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
  /** The next `times` calls of `method` answer HTTP 429 with `Retry-After: seconds` (after `after` answered as usual). */
  rateLimitNext(method: string, seconds: number, times?: number, after?: number): void;
  /**
   * The next call of `method` is never answered: with `keep`, a post is kept first (Slack took it,
   * and the answer never came back); without, it is dropped (it never arrived).
   */
  holdNext(method: string, options: { keep: boolean }): void;
  /** Resolves when a held call has come in. */
  held(): Promise<void>;
  /** Deletes a message, as someone in Slack may. */
  deleteMessage(ts: string, channel?: string): void;
  /** Resolves when a Socket Mode connection has been greeted with `hello` (the `n`th, default the first). */
  connected(n?: number): Promise<void>;
  /** Socket Mode connections opened so far. */
  readonly connections: number;
  /** Socket Mode connections open now. */
  readonly openSockets: number;
  /** From now on `apps.connections.open` takes this app-level token only (a token rotated). */
  setAppToken(token: string): void;
  /**
   * From now on `apps.connections.open` hands out this WebSocket address instead of its own (a
   * Socket Mode peer on another thread, for a test that blocks this one).
   */
  handSocketsTo(url: string): void;
  /** Sends a frame as it stands on the open Socket Mode connection (a hostile or broken envelope). */
  sendOverSocket(frame: string | Buffer): void;
  /** A click as an `interactive` envelope, not sent: for a test that sends it from elsewhere. */
  socketClick(spec: ClickSpec): { envelopeId: string; envelope: string; click: Click };
  /** Slack asks every open Socket Mode connection to go (`disconnect`, as it does every few hours). */
  disconnectSockets(): void;
  /** A click sent over Socket Mode; resolves when the daemon acknowledged its envelope. */
  clickOverSocket(spec: ClickSpec): Promise<Click>;
  /**
   * A click posted over HTTP to `url`, signed with `signingSecret` as Slack signs it (at `timestamp`,
   * in seconds, default now); `tamper` changes the body after signing. Answers the HTTP status.
   */
  clickOverHttp(
    url: string,
    signingSecret: string,
    spec: ClickSpec,
    options?: { timestamp?: number; tamper?: boolean },
  ): Promise<{ status: number; click: Click }>;
  /**
   * A click as Slack would post it over HTTP, signed with `signingSecret` now, not sent: for a
   * test that posts it from elsewhere (another thread).
   */
  signedClick(signingSecret: string, spec: ClickSpec): { headers: Record<string, string>; body: string; click: Click };
  /** Every answer given at a response URL, in order. */
  readonly answers: ClickAnswer[];
  /** The envelope ids the daemon acknowledged. */
  readonly acks: string[];
  close(): Promise<void>;
}

/** The first button (or menu option) of a message whose label is `label`: what it hands back, or opens. */
export function buttonOf(
  message: SlackApiMessage | undefined,
  label: string,
  of?: string,
): { value?: string; url?: string; action_id: string } | undefined {
  type Element = { type: string; action_id: string; text?: { text: string }; value?: string; url?: string };
  type Block = {
    type: string;
    elements?: Element[];
    accessory?: Element & { options?: { text: { text: string }; value: string; url?: string }[] };
    text?: { text?: string };
  };
  const blocks = [
    ...((message?.blocks ?? []) as Block[]),
    ...(message?.attachments ?? []).flatMap((a) => (a.blocks ?? []) as Block[]),
  ];
  for (const [i, b] of blocks.entries()) {
    // `of`: the button must be in the row under (or the menu beside) the text naming that alert.
    const about = (b.type === 'section' ? b : blocks[i - 1])?.text?.text ?? '';
    if (of !== undefined && !about.includes(of)) continue;
    for (const e of b.elements ?? []) if (e.text?.text === label) return e;
    const option = b.accessory?.options?.find((o) => o.text.text === label);
    if (option) return { ...option, action_id: b.accessory!.action_id };
  }
  return undefined;
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
  // Slack's side of the buttons: the Socket Mode tickets given out, the sockets greeted, the
  // envelopes acknowledged and the answers given at response URLs (each awaited by its click).
  const tickets = new Set<string>();
  const sockets = new Set<WebSocket>();
  const acks: string[] = [];
  const ackWaiters = new Map<string, () => void>();
  const answers: ClickAnswer[] = [];
  const answerWaiters = new Map<string, (a: ClickAnswer) => void>();
  const greeted: (() => void)[] = [];
  let connections = 0;
  let appToken = options.appToken;
  let socketUrl: string | undefined;
  let port = 0;

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
    'usergroups.users.list': (a) => {
      const users = options.usergroups?.[String(a.usergroup ?? '')];
      return users ? { users } : { error: 'no_such_subteam' };
    },
    'apps.connections.open': () => {
      const ticket = randomBytes(8).toString('hex');
      tickets.add(ticket);
      return { url: socketUrl ?? `ws://127.0.0.1:${port}/link/?ticket=${ticket}` };
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
    const respond = /^\/respond\/([0-9a-f]+)$/.exec(req.url ?? '');
    if (respond && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ClickAnswer;
      answers.push(body);
      answerWaiters.get(respond[1]!)?.(body);
      return answer(res, 200, { ok: true });
    }
    const match = /^\/api\/([a-zA-Z.]+)$/.exec(req.url ?? '');
    const method = match?.[1];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const json = (req.headers['content-type'] ?? '').startsWith('application/json');
    const args = json ? (JSON.parse(body || '{}') as Record<string, unknown>) : formArgs(body);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    // Socket Mode takes the app-level token; every other method the bot token.
    const wanted = method === 'apps.connections.open' ? appToken : options.token;
    const authorized = wanted !== undefined && (bearer ?? args.token) === wanted;
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
  // Idle connections stay open until close(), as the webhook receiver's do: no keep-alive race.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  // Socket Mode: a WebSocket on the same port, for the tickets apps.connections.open gave out.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const ticket = new URL(req.url ?? '/', 'http://x').searchParams.get('ticket') ?? '';
    if (!tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      connections += 1;
      ws.on('close', () => sockets.delete(ws));
      ws.on('message', (data) => {
        const { envelope_id } = JSON.parse(String(data)) as { envelope_id?: string };
        if (!envelope_id) return;
        acks.push(envelope_id);
        ackWaiters.get(envelope_id)?.();
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: sockets.size,
          debug_info: { host: 'local', approximate_connection_time: 18060 },
          connection_info: { app_id: 'A0LOCAL' },
        }),
      );
      for (const notify of greeted.splice(0)) notify();
    });
  });
  const connectedAt = (n: number): Promise<void> =>
    connections >= n
      ? Promise.resolve()
      : new Promise((resolve) => greeted.push(() => void connectedAt(n).then(resolve)));

  /** A click's payload, as Slack sends it for a button (or a menu option) in a message's attachment. */
  const click = (spec: ClickSpec): { payload: Record<string, unknown>; click: Click } => {
    const id = randomBytes(6).toString('hex');
    const answered = new Promise<ClickAnswer>((resolve) => answerWaiters.set(id, resolve));
    const action = spec.viaMenu
      ? { type: 'overflow', action_id: 'dw.menu', block_id: 'b1', selected_option: { value: spec.value } }
      : { type: 'button', action_id: 'dw.button', block_id: 'b1', value: spec.value };
    const payload = {
      type: 'block_actions',
      user: { id: spec.user.id, username: spec.user.username, name: spec.user.username, team_id: 'T0LOCAL' },
      api_app_id: 'A0LOCAL',
      token: 'deprecated-verification-token',
      container: {
        type: 'message_attachment',
        message_ts: spec.message.ts,
        attachment_id: 1,
        channel_id: spec.message.channel,
        is_ephemeral: false,
        is_app_unfurl: false,
      },
      trigger_id: `${id}.trigger`,
      team: { id: 'T0LOCAL', domain: 'local' },
      channel: { id: spec.message.channel, name: 'alerts' },
      message: { type: 'message', ts: spec.message.ts, text: '…' },
      response_url: `http://127.0.0.1:${port}/respond/${id}`,
      actions: [{ ...action, action_ts: `${Math.floor(now() / 1000)}.000100` }],
    };
    return { payload, click: { answer: answered } };
  };
  /** A click as the `interactive` envelope Socket Mode carries. */
  const envelopeOf = (spec: ClickSpec) => {
    const made = click(spec);
    const envelopeId = randomBytes(8).toString('hex');
    const envelope = JSON.stringify({
      envelope_id: envelopeId,
      type: 'interactive',
      accepts_response_payload: false,
      payload: made.payload,
    });
    return { envelopeId, envelope, click: made.click };
  };
  /** A click signed as Slack signs it (at `timestamp`, in seconds, default now). */
  const signed = (signingSecret: string, spec: ClickSpec, timestamp = Math.floor(now() / 1000)) => {
    const made = click(spec);
    const body = new URLSearchParams({ payload: JSON.stringify(made.payload) }).toString();
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(signingSecret, String(timestamp), body),
    };
    return { headers, body, click: made.click };
  };

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
    rateLimitNext: (method, seconds, times = 1, after = 0) => {
      push(method, { kind: 'pass' }, after);
      push(method, { kind: 'rateLimit', seconds }, times);
    },
    holdNext: (method, o) => {
      heldPromise = new Promise((resolve) => (heldNotify = resolve));
      push(method, { kind: 'hold', keep: o.keep }, 1);
    },
    held: () => heldPromise,
    deleteMessage: (ts, channel = DEFAULT_CHANNEL) => {
      const m = find(channel, ts);
      if (m) m.deleted = true;
    },
    connected: (n = 1) => connectedAt(n),
    get connections() {
      return connections;
    },
    disconnectSockets: () => {
      for (const ws of sockets) ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
    },
    get openSockets() {
      return sockets.size;
    },
    setAppToken: (token) => (appToken = token),
    handSocketsTo: (url) => (socketUrl = url),
    sendOverSocket: (frame) => {
      const [ws] = sockets;
      if (!ws) throw new Error('no Socket Mode connection to send on');
      ws.send(frame, { binary: typeof frame !== 'string' });
    },
    socketClick: envelopeOf,
    clickOverSocket: async (spec) => {
      const [ws] = sockets;
      if (!ws) throw new Error('no Socket Mode connection to click through');
      const made = envelopeOf(spec);
      const acked = new Promise<void>((resolve) => ackWaiters.set(made.envelopeId, resolve));
      ws.send(made.envelope);
      await acked;
      return made.click;
    },
    signedClick: (signingSecret, spec) => signed(signingSecret, spec),
    clickOverHttp: async (url, signingSecret, spec, o = {}) => {
      const made = signed(signingSecret, spec, o.timestamp);
      const res = await request(url, {
        method: 'POST',
        headers: made.headers,
        body: o.tamper ? made.body.replace('U0', 'U1') : made.body,
      });
      await res.body.dump();
      return { status: res.statusCode, click: made.click };
    },
    answers,
    acks,
    close: async () => {
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
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

/** What an interactive element or a menu option may hold (Block Kit's limits). */
const ELEMENT_LIMITS = { perActions: 25, text: 75, value: 2000, optionValue: 150, url: 3000, actionId: 255 };

type Element = {
  type?: string;
  action_id?: string;
  text?: { text?: string };
  value?: string;
  url?: string;
  options?: { text?: { text?: string }; value?: string; url?: string }[];
};

/**
 * Why Slack would refuse the buttons and menus of a message (its blocks and its attachments'):
 * too many in a row, a label, value or URL too long, a menu of fewer than two or more than five
 * options, or an action_id used twice.
 */
function elementRefusal(a: Record<string, unknown>): string | undefined {
  const blocks = [
    ...((a.blocks as { elements?: Element[]; accessory?: Element; type?: string }[] | undefined) ?? []),
    ...(
      (a.attachments as { blocks?: { elements?: Element[]; accessory?: Element; type?: string }[] }[] | undefined) ?? []
    ).flatMap((att) => att.blocks ?? []),
  ];
  const ids = new Set<string>();
  const long = (text: string | undefined, max: number) => text !== undefined && text.length > max;
  for (const b of blocks) {
    const elements = [...(b.type === 'actions' ? (b.elements ?? []) : []), ...(b.accessory ? [b.accessory] : [])];
    if (b.type === 'actions' && elements.length > ELEMENT_LIMITS.perActions) return 'invalid_blocks';
    for (const e of elements) {
      if (!e.action_id || long(e.action_id, ELEMENT_LIMITS.actionId) || ids.has(e.action_id)) return 'invalid_blocks';
      ids.add(e.action_id);
      if (
        long(e.text?.text, ELEMENT_LIMITS.text) ||
        long(e.value, ELEMENT_LIMITS.value) ||
        long(e.url, ELEMENT_LIMITS.url)
      )
        return 'invalid_blocks';
      if (e.type === 'overflow') {
        const options = e.options ?? [];
        if (options.length < 2 || options.length > 5) return 'invalid_blocks';
        for (const o of options) {
          if (!o.value || long(o.value, ELEMENT_LIMITS.optionValue) || long(o.text?.text, ELEMENT_LIMITS.text))
            return 'invalid_blocks';
          if (long(o.url, ELEMENT_LIMITS.url)) return 'invalid_blocks';
        }
      }
    }
  }
  return undefined;
}

/** Why Slack would refuse the message or one of its attachments, or undefined. */
function refusalOf(a: Record<string, unknown>): string | undefined {
  const elements = elementRefusal(a);
  if (elements) return elements;
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
