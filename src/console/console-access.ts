/**
 * Who may use the console, and whether a form really came from it. Every answer is a named
 * decision, so a refusal says why (and the tests read as tables):
 *
 * - Open on loopback: anyone on this machine, recorded as `console@loopback`. The request's Host
 *   must be a loopback name too, or a web page could reach the console through DNS rebinding (its
 *   own name resolving to 127.0.0.1) and read it as same-origin.
 * - A token (`server.console.auth.token`): as `Authorization: Bearer …`, or once at the login page,
 *   which sets a session cookie (HttpOnly, SameSite=Strict): a random id this process remembers
 *   for 12 hours, until the visitor signs out, or until a restart or a new token. Recorded as
 *   `console@token`.
 * - Basic auth (`auth.user`, `auth.password`): the browser asks; recorded as the user name.
 *
 * Forms (every write, and the login) carry a CSRF token: an HMAC, under a key drawn when the
 * process starts, of who is signed in; and a POST whose `Sec-Fetch-Site` or `Origin` says it came
 * from another site is refused before the token is even looked at.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Secret } from '../lib/secret.js';
import type { ConsoleConfig } from '../config/console-config.js';
import { isLoopbackHost } from '../config/loopback-host.js';
import { sameText } from '../lib/same-text.js';

/** The session cookie's name. */
export const SESSION_COOKIE = 'dw_console';
/** The name of the hidden form field holding the CSRF token. */
export const CSRF_FIELD = 'csrf';
/** Who a loopback visitor is, in the audit. */
export const LOOPBACK_USER = 'console@loopback';
/** Who a visitor signed in with the token is, in the audit. */
export const TOKEN_USER = 'console@token';

/** Why a request is not let in. */
export type AccessRefusal =
  /** No credentials at all (a browser is sent to the login page, or asked for basic auth). */
  | 'no_credentials'
  /** A token, cookie or password that is not the configured one. */
  | 'wrong_credentials'
  /** Open on loopback, but the Host header names another host (DNS rebinding). */
  | 'host_not_loopback';

/** Who is asking, or why they are refused. */
export type AccessDecision =
  | { allowed: true; who: string }
  | { allowed: false; status: 401 | 403; reason: AccessRefusal; message: string; basicChallenge: boolean };

/** Why a form is refused. */
export type FormRefusal = 'cross_site' | 'cross_origin' | 'csrf_missing' | 'csrf_wrong';

/** Whether a POSTed form may be acted on. */
export type FormDecision = { ok: true } | { ok: false; reason: FormRefusal; message: string };

/** The access rules of one console, with this process's key. */
export class ConsoleAccess {
  readonly #key: Buffer;
  /** The sessions signed in and not out: cookie value → the digest of the token they signed in with, and their end. */
  readonly #sessions = new Map<string, { token: string; until: number }>();
  readonly #now: () => number;

  constructor(key: Buffer = randomBytes(32), now: () => number = Date.now) {
    this.#key = key;
    this.#now = now;
  }

  /** Who the request is from, under the console's auth config. */
  decide(headers: IncomingHttpHeaders, auth: ConsoleConfig['auth']): AccessDecision {
    if (auth === undefined) {
      if (!isLoopbackHostHeader(headers.host))
        return refuse(403, 'host_not_loopback', 'the console is open to loopback only: use http://127.0.0.1', false);
      return { allowed: true, who: LOOPBACK_USER };
    }
    const given = headers.authorization ?? '';
    if (auth.token !== undefined) {
      const bearer = /^Bearer\s+(.+)$/i.exec(given)?.[1]?.trim();
      if (bearer !== undefined) {
        return sameText(bearer, auth.token.reveal())
          ? { allowed: true, who: TOKEN_USER }
          : refuse(401, 'wrong_credentials', 'wrong token', false);
      }
      const session = cookieValue(headers.cookie, SESSION_COOKIE);
      if (session === undefined) return refuse(401, 'no_credentials', 'sign in with the console token', false);
      const signedIn = this.#sessions.get(session);
      if (signedIn && signedIn.until <= this.#now()) this.#sessions.delete(session);
      return signedIn?.token === tokenDigest(auth.token) && signedIn.until > this.#now()
        ? { allowed: true, who: TOKEN_USER }
        : refuse(401, 'wrong_credentials', SESSION_OVER, false);
    }
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(given)?.[1];
    if (basic === undefined) return refuse(401, 'no_credentials', 'sign in with the console user', true);
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    // Both compared, whatever the first says, so the time taken does not tell which was wrong.
    const userOk = colon >= 0 && sameText(user, auth.user ?? '');
    const passwordOk = sameText(password, auth.password?.reveal() ?? '');
    return userOk && passwordOk
      ? { allowed: true, who: user }
      : refuse(401, 'wrong_credentials', 'wrong user or password', true);
  }

  /** Whether a token given at the login page is the configured one. */
  tokenMatches(given: string, token: Secret): boolean {
    return sameText(given.trim(), token.reveal());
  }

  /**
   * A new session, for a sign-in with this token: the cookie's value, drawn at random and
   * remembered with the token's digest (a new token ends it) until {@link endSession}.
   */
  startSession(token: Secret): string {
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { token: tokenDigest(token), until: this.#now() + SESSION_LIFETIME_MS });
    // The oldest forgotten past the bound: sign-ins that never sign out cannot grow it for ever.
    if (this.#sessions.size > MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    return id;
  }

  /** Ends the session a Cookie header names (a sign-out): its cookie, kept or stolen, lets no one in. */
  endSession(cookie: string | undefined): void {
    const id = cookieValue(cookie, SESSION_COOKIE);
    if (id !== undefined) this.#sessions.delete(id);
  }

  /** The CSRF token of the forms shown to `who` (an anonymous visitor of the login page: ''). */
  csrfToken(who: string): string {
    return this.#mac(`csrf\0${who}`);
  }

  /**
   * Whether a POSTed form may be acted on: not sent by another site (`Sec-Fetch-Site`, then
   * `Origin` against `Host`, or against `publicUrl`, `server.console.public_url`: a reverse proxy
   * may send its upstream's address as Host), and carrying the CSRF token of `who`.
   */
  checkForm(headers: IncomingHttpHeaders, who: string, token: string | undefined, publicUrl?: string): FormDecision {
    const site = headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      return formRefused('cross_site', `a form sent from another site (${site}) is refused`);
    const origin = headers.origin;
    if (origin !== undefined && originHost(origin) !== headers.host && !sameOrigin(origin, publicUrl))
      return formRefused('cross_origin', 'a form sent from another origin is refused');
    if (token === undefined || token === '')
      return formRefused('csrf_missing', 'the form has no CSRF token: reload the page');
    if (!sameText(token, this.csrfToken(who)))
      return formRefused('csrf_wrong', 'the form is stale (a restart or another user): reload the page');
    return { ok: true };
  }

  #mac(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('base64url');
  }
}

/** The most sessions remembered at once: past it, the oldest ends. */
const MAX_SESSIONS = 1_000;

/**
 * How long a sign-in lasts: one on-call shift. A session never signed out (a shared screen, a
 * cookie copied off a proxy's log) otherwise let its holder in until the daemon restarted.
 */
export const SESSION_LIFETIME_MS = 12 * 3_600_000;

const SESSION_OVER =
  'the session is over (12 hours after sign-in, a sign-out, a restart or a new token): sign in again';

/** A token's SHA-256, what a session remembers of it. */
function tokenDigest(token: Secret): string {
  return createHash('sha256').update(token.reveal()).digest('hex');
}

function refuse(status: 401 | 403, reason: AccessRefusal, message: string, basicChallenge: boolean): AccessDecision {
  return { allowed: false, status, reason, message, basicChallenge };
}

function formRefused(reason: FormRefusal, message: string): FormDecision {
  return { ok: false, reason, message };
}

/** A loopback Host header: a loopback name or address (`loopback-host.ts`), with any port. */
function isLoopbackHostHeader(host: string | undefined): boolean {
  const name = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(host?.trim() ?? '')?.[1];
  return name !== undefined && isLoopbackHost(name);
}

/** The host:port of an Origin header, or undefined for `null` or a malformed one. */
function originHost(origin: string): string | undefined {
  return URL.canParse(origin) ? new URL(origin).host : undefined;
}

/** Whether an Origin header names the origin of `url` (scheme, host and port). */
function sameOrigin(origin: string, url: string | undefined): boolean {
  return (
    url !== undefined && URL.canParse(origin) && URL.canParse(url) && new URL(origin).origin === new URL(url).origin
  );
}

/** One cookie's value from a Cookie header. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
