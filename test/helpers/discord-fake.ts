/**
 * A protocol-level fake of a Discord channel webhook (POST /api/webhooks/{id}/{token}) for tests, on
 * loopback. It checks a message as Discord does (content at most 2000 characters; at most 10 embeds,
 * each title 256, description 4096, at most 25 fields of name 256 and value 1024, footer 2048, and
 * 6000 characters of embed text in all; `allowed_mentions` of the documented shape) and refuses
 * the rest 400 `Invalid Form Body` (code 50035); an unknown token is 401/404 `Unknown Webhook`.
 *
 * Its rate limit is one bucket per webhook, on the test's clock: `limit` requests per `resetAfterMs`,
 * every answer carrying X-RateLimit-Limit, -Remaining, -Reset, -Reset-After and -Bucket. A request
 * while the bucket is empty is answered 429 with `retry_after` (seconds) in its JSON body, a
 * Retry-After header and X-RateLimit-Scope: user, and counted in `overLimit`: a client that
 * honours the headers never sees one. A valid message is answered 204 without `?wait=true`, and
 * with it 200 and the message object, its `id` after its embeds as Discord writes it.
 *
 * A posted message can be edited as Discord's "Edit Webhook Message" does
 * (`PATCH /api/webhooks/{id}/{token}/messages/{message_id}`): `content`, `embeds` and
 * `allowed_mentions` only (a webhook's name and avatar are the post's), checked as a post; a
 * message it does not have (never posted, or `deleteMessage`d) is 404 `Unknown Message` (10008).
 * Edits draw from a bucket of their own, as Discord's buckets are per route.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { problems, startFakeService, type FakeAnswer, type FakeService } from './fake-service.js';

const embed = z
  .object({
    title: z.string().max(256).optional(),
    type: z.literal('rich').optional(),
    description: z.string().max(4096).optional(),
    url: z.url().optional(),
    timestamp: z.iso.datetime({ offset: true }).optional(),
    color: z.number().int().min(0).max(0xffffff).optional(),
    footer: z
      .object({ text: z.string().max(2048), icon_url: z.url().optional() })
      .strict()
      .optional(),
    author: z
      .object({ name: z.string().max(256), url: z.url().optional() })
      .strict()
      .optional(),
    fields: z
      .array(
        z.object({ name: z.string().max(256), value: z.string().max(1024), inline: z.boolean().optional() }).strict(),
      )
      .max(25)
      .optional(),
  })
  .strict();

const snowflakes = z.array(z.string().regex(/^\d+$/)).max(100);

const messageObject = z
  .object({
    content: z.string().max(2000).optional(),
    username: z.string().min(1).max(80).optional(),
    avatar_url: z.url().optional(),
    tts: z.boolean().optional(),
    embeds: z.array(embed).max(10).optional(),
    allowed_mentions: z
      .object({
        parse: z.array(z.enum(['roles', 'users', 'everyone'])).optional(),
        roles: snowflakes.optional(),
        users: snowflakes.optional(),
        replied_user: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** Discord's checks across fields: the embeds' 6000 characters in all, a name it keeps for itself, and something to show. */
function refineMessage(m: Partial<z.infer<typeof messageObject>>, ctx: z.RefinementCtx): void {
  const total = (m.embeds ?? []).reduce(
    (n, e) =>
      n +
      (e.title?.length ?? 0) +
      (e.description?.length ?? 0) +
      (e.footer?.text.length ?? 0) +
      (e.author?.name.length ?? 0) +
      (e.fields ?? []).reduce((f, x) => f + x.name.length + x.value.length, 0),
    0,
  );
  if (total > 6000)
    ctx.addIssue({ code: 'custom', path: ['embeds'], message: `embed size exceeds maximum size of 6000 (${total})` });
  if (m.username && /discord|clyde/i.test(m.username))
    ctx.addIssue({ code: 'custom', path: ['username'], message: 'Username cannot contain "discord" or "clyde"' });
  if (!m.content && !(m.embeds ?? []).length)
    ctx.addIssue({ code: 'custom', path: [], message: 'Cannot send an empty message' });
}

/** A message as a post may carry it. */
export const discordMessage = messageObject.superRefine(refineMessage);

/** A message the fake took. */
export type DiscordReceived = z.infer<typeof discordMessage>;

/** What an edit may carry. */
const discordEdit = messageObject.omit({ username: true, avatar_url: true, tts: true }).superRefine(refineMessage);

/** A message as it now stands in the channel, by its id. */
export interface DiscordPosted {
  id: string;
  message: DiscordReceived;
  /** How many times it was edited. */
  edits: number;
}

/** Options of {@link startDiscordFake}. */
export interface DiscordFakeOptions {
  /** The test's clock, for the bucket's resets. */
  now: () => number;
  /** Requests per window (default 5, as Discord's webhooks allow). */
  limit?: number;
  /** The window, in ms (default 2000). */
  resetAfterMs?: number;
}

/** The running fake. */
export interface DiscordFake extends FakeService {
  /** The webhook URL, its token the credential. */
  readonly url: string;
  readonly token: string;
  /** Every message posted, as posted, oldest first. */
  readonly messages: DiscordReceived[];
  /** The messages posted with `?wait=true` (they have an id), as they now stand after edits. */
  readonly posted: Map<string, DiscordPosted>;
  readonly invalid: string[][];
  /** Requests that arrived while their bucket was empty (answered 429). */
  readonly overLimit: number;
  /** Deletes a message, as a moderator would: an edit of it is then 404. */
  deleteMessage(id: string): void;
}

/** One route's bucket on the test's clock. */
class Bucket {
  readonly name = randomBytes(8).toString('hex');
  #windowEnds = 0;
  #used = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Takes a request: false when the bucket is empty. */
  take(now: number): boolean {
    if (now >= this.#windowEnds) {
      this.#windowEnds = now + this.windowMs;
      this.#used = 0;
    }
    if (this.#used >= this.limit) return false;
    this.#used++;
    return true;
  }

  /** The headers of an answer. */
  headers(now: number): Record<string, string> {
    return {
      'x-ratelimit-limit': String(this.limit),
      'x-ratelimit-remaining': String(Math.max(0, this.limit - this.#used)),
      'x-ratelimit-reset': (this.#windowEnds / 1000).toFixed(3),
      'x-ratelimit-reset-after': (Math.max(0, this.#windowEnds - now) / 1000).toFixed(3),
      'x-ratelimit-bucket': this.name,
    };
  }

  /** The 429 of a request while it is empty. */
  refusal(now: number): FakeAnswer {
    const retryAfter = (this.#windowEnds - now) / 1000;
    return {
      status: 429,
      headers: { ...this.headers(now), 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-scope': 'user' },
      body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
    };
  }
}

/** Starts the fake. */
export async function startDiscordFake(options: DiscordFakeOptions): Promise<DiscordFake> {
  const id = `${BigInt(`0x${randomBytes(7).toString('hex')}`)}`;
  const channelId = `${BigInt(`0x${randomBytes(7).toString('hex')}`)}`;
  const token = randomBytes(32).toString('base64url');
  const path = `/api/webhooks/${id}/${token}`;
  const buckets = {
    POST: new Bucket(options.limit ?? 5, options.resetAfterMs ?? 2000),
    PATCH: new Bucket(options.limit ?? 5, options.resetAfterMs ?? 2000),
  };
  const messages: DiscordReceived[] = [];
  const posted = new Map<string, DiscordPosted>();
  const invalid: string[][] = [];
  const state = { overLimit: 0, nextId: 1_100_000_000_000_000_000n };

  /** The message object Discord answers, its id after its embeds as Discord writes it. */
  const messageObject = (p: DiscordPosted) => ({
    type: 0,
    channel_id: channelId,
    content: p.message.content ?? '',
    embeds: p.message.embeds ?? [],
    edited_timestamp: p.edits > 0 ? new Date(options.now()).toISOString() : null,
    id: p.id,
    webhook_id: id,
  });

  const service = await startFakeService((req): FakeAnswer => {
    const url = new URL(req.url, 'http://discord');
    const edit = /^(\/api\/webhooks\/[^/]+\/[^/]+)\/messages\/(\d+)$/.exec(url.pathname);
    const hook = edit ? edit[1] : url.pathname;
    const method = req.method === 'PATCH' && edit ? 'PATCH' : req.method === 'POST' && !edit ? 'POST' : null;
    if (!method || !url.pathname.startsWith('/api/webhooks/'))
      return { status: 404, body: { message: '404: Not Found', code: 0 } };
    if (hook !== path) return { status: 401, body: { message: 'Invalid Webhook Token', code: 50027 } };
    const now = options.now();
    const bucket = buckets[method];
    if (!bucket.take(now)) {
      state.overLimit++;
      return bucket.refusal(now);
    }
    const headers = bucket.headers(now);
    const parsed = (method === 'PATCH' ? discordEdit : discordMessage).safeParse(req.body);
    if (!parsed.success) {
      const errors = problems(parsed.error.issues);
      invalid.push(errors);
      return { status: 400, headers, body: { message: 'Invalid Form Body', code: 50035, errors } };
    }
    if (edit) {
      const shown = posted.get(edit[2]!);
      if (!shown) return { status: 404, headers, body: { message: 'Unknown Message', code: 10008 } };
      shown.message = { ...shown.message, ...parsed.data };
      shown.edits++;
      return { status: 200, headers, body: messageObject(shown) };
    }
    messages.push(parsed.data);
    if (url.searchParams.get('wait') !== 'true') return { status: 204, headers };
    const made: DiscordPosted = { id: String(state.nextId++), message: parsed.data, edits: 0 };
    posted.set(made.id, made);
    return { status: 200, headers, body: messageObject(made) };
  });
  const fake = Object.assign(service, {
    url: `${service.root}${path}`,
    token,
    messages,
    posted,
    invalid,
    deleteMessage: (message: string) => void posted.delete(message),
  });
  // A getter, so that it reads the count when asked (Object.assign would copy it once).
  Object.defineProperty(fake, 'overLimit', { get: () => state.overLimit });
  return fake as DiscordFake;
}
