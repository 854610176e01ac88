/**
 * `server.console`: the web console served on `server.listen` beside `/healthz`, `/readyz` and
 * `/metrics`, and who may use it. Open on loopback; anywhere else it needs a token or a basic-auth
 * user. `enabled: auto` (the default) serves it where that holds and, on a wider listener without
 * auth, answers every console page with a message saying what to set (health and metrics go on as
 * before, so a config that only exposed /metrics keeps working); `enabled: true` makes the same
 * situation a configuration error, so the daemon refuses to start.
 */
import { z } from 'zod';
import { durationSchema } from './duration.js';
import { addProblem } from './schema-blocks.js';
import { secretSchema } from './secret.js';
import { isLoopbackHost } from './loopback-host.js';
import { parseListen } from './parse-listen.js';

/** The shortest console token taken: a network-facing password should not be guessable. */
const MIN_TOKEN_LENGTH = 16;

/** A console token or password: a secret of at least {@link MIN_TOKEN_LENGTH} characters. */
const passwordSchema = secretSchema.refine(
  (s) => s.reveal().length >= MIN_TOKEN_LENGTH,
  `must be at least ${MIN_TOKEN_LENGTH} characters`,
);

/** The `server.console` section. */
export const consoleConfigSchema = z.strictObject({
  enabled: z
    .union([z.literal('auto'), z.boolean()], { error: 'must be auto, true or false' })
    .default('auto')
    .describe(
      'auto: on when server.listen is loopback or auth is set, else every page says what to set; true: the same, but a wider listener without auth is a configuration error; false: off.',
    ),
  auth: z
    .strictObject({
      token: passwordSchema
        .optional()
        .describe(
          'A token (use ${VAR}) given at the login page, or as "Authorization: Bearer …"; writes are recorded as console@token.',
        ),
      user: z
        .string()
        .regex(/^[^:\s]{1,64}$/, 'must be 1 to 64 characters, without spaces or ":"')
        .optional()
        .describe('Basic-auth user name, recorded as the author of every write.'),
      password: passwordSchema.optional().describe('Basic-auth password (use ${VAR}).'),
    })
    .superRefine((auth, ctx) => {
      const basic = Number(auth.user !== undefined) + Number(auth.password !== undefined);
      if (basic === 1) {
        const missing = auth.user === undefined ? 'user' : 'password';
        addProblem(ctx, [missing], 'is required with basic auth (user and password)');
      }
      if (auth.token !== undefined && basic > 0) {
        addProblem(ctx, ['token'], 'give a token or a user and password, not both');
      }
      if (auth.token === undefined && basic === 0) {
        addProblem(ctx, [], 'give a token, or a user and password');
      }
    })
    .optional()
    .describe('Required when server.listen is not a loopback address.'),
  public_url: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional()
    .describe(
      "The address people reach the console at (its reverse proxy, say): the Slack app's Open in console buttons link there, and it is the webhook channel's externalURL unless the channel sets one. Absent: no such links.",
    ),
  allow: z
    .strictObject({
      remediate: z
        .union([z.enum(['anyone', 'nobody']), z.strictObject({ users: z.array(z.string().min(1)).min(1) })], {
          error: 'must be anyone, nobody, or { users: [NAME, …] }',
        })
        .default('anyone')
        .describe(
          "Who may ask for a remediation policy's action (Retry now, Restart app, Back up now, Leave maintenance) from the console: anyone the console lets in (default), nobody, or the users named as the console records them (the basic-auth user, console@token, console@loopback).",
        ),
    })
    .prefault({}),
  max_silence: durationSchema
    .refine((ms) => ms >= 60_000, 'must be at least 1m')
    .prefault('7d')
    .describe('The longest silence the console creates.'),
});

/** The parsed `server.console` section. */
export type ConsoleConfig = z.output<typeof consoleConfigSchema>;

/** Whether a console may be served on this listener with this config, and if not, why (named). */
export type ConsoleServing =
  { serve: true } | { serve: false; reason: 'disabled' | 'listener_off' | 'needs_auth'; message: string };

/**
 * The listener's host is a loopback address (127.0.0.0/8, ::1, localhost): only this machine
 * reaches it. An address that does not parse is not (the schema reports it).
 */
export function isLoopbackListen(listen: string): boolean {
  try {
    return isLoopbackHost(parseListen(listen).host);
  } catch {
    return false;
  }
}

/** Whether `who` (as the console records them) may ask for a remediation under `allow.remediate`. */
export function mayRemediate(console: ConsoleConfig, who: string): boolean {
  const allow = console.allow.remediate;
  if (allow === 'anyone' || allow === 'nobody') return allow === 'anyone';
  return allow.users.includes(who);
}

/** Decides {@link ConsoleServing}: the console is open on loopback, and anywhere else only with auth. */
export function consoleServing(listen: string | null, console: ConsoleConfig): ConsoleServing {
  if (console.enabled === false) {
    return { serve: false, reason: 'disabled', message: 'the console is off (server.console.enabled: false)' };
  }
  if (listen === null) {
    return { serve: false, reason: 'listener_off', message: 'server.listen is off: the console is served there' };
  }
  if (console.auth === undefined && !isLoopbackListen(listen)) {
    return {
      serve: false,
      reason: 'needs_auth',
      message:
        `server.listen (${listen}) is not a loopback address, so the console needs server.console.auth ` +
        '(a token, or a user and password); or listen on 127.0.0.1',
    };
  }
  return { serve: true };
}
