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
 * honours the headers never sees one. A valid message is answered 204, as without `?wait=true`.
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

export const discordMessage = z
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
  .strict()
  .superRefine((m, ctx) => {
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
    if (!m.content && !(m.embeds ?? []).length)
      ctx.addIssue({ code: 'custom', path: [], message: 'Cannot send an empty message' });
  });

/** A message the fake took. */
export type DiscordReceived = z.infer<typeof discordMessage>;

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
  readonly messages: DiscordReceived[];
  readonly invalid: string[][];
  /** Requests that arrived while the bucket was empty (answered 429). */
  readonly overLimit: number;
}

/** Starts the fake. */
export async function startDiscordFake(options: DiscordFakeOptions): Promise<DiscordFake> {
  const id = `${BigInt(`0x${randomBytes(7).toString('hex')}`)}`;
  const token = randomBytes(32).toString('base64url');
  const path = `/api/webhooks/${id}/${token}`;
  const limit = options.limit ?? 5;
  const windowMs = options.resetAfterMs ?? 2000;
  const bucket = randomBytes(8).toString('hex');
  let windowEnds = 0;
  let used = 0;
  const messages: DiscordReceived[] = [];
  const invalid: string[][] = [];
  const state = { overLimit: 0 };

  const rateHeaders = (now: number): Record<string, string> => ({
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, limit - used)),
    'x-ratelimit-reset': (windowEnds / 1000).toFixed(3),
    'x-ratelimit-reset-after': (Math.max(0, windowEnds - now) / 1000).toFixed(3),
    'x-ratelimit-bucket': bucket,
  });

  const service = await startFakeService((req): FakeAnswer => {
    const url = new URL(req.url, 'http://discord');
    if (req.method !== 'POST' || !url.pathname.startsWith('/api/webhooks/'))
      return { status: 404, body: { message: '404: Not Found', code: 0 } };
    if (url.pathname !== path) return { status: 401, body: { message: 'Invalid Webhook Token', code: 50027 } };
    const now = options.now();
    if (now >= windowEnds) {
      windowEnds = now + windowMs;
      used = 0;
    }
    if (used >= limit) {
      state.overLimit++;
      const retryAfter = (windowEnds - now) / 1000;
      return {
        status: 429,
        headers: { ...rateHeaders(now), 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-scope': 'user' },
        body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
      };
    }
    used++;
    const parsed = discordMessage.safeParse(req.body);
    if (!parsed.success) {
      const errors = problems(parsed.error.issues);
      invalid.push(errors);
      return { status: 400, headers: rateHeaders(now), body: { message: 'Invalid Form Body', code: 50035, errors } };
    }
    messages.push(parsed.data);
    return { status: 204, headers: rateHeaders(now) };
  });
  const fake = Object.assign(service, { url: `${service.root}${path}`, token, messages, invalid });
  // A getter, so that it reads the count when asked (Object.assign would copy it once).
  Object.defineProperty(fake, 'overLimit', { get: () => state.overLimit });
  return fake as DiscordFake;
}
