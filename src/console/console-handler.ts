/**
 * The web console's requests, on the health listener (everything but `/healthz`, `/readyz` and
 * `/metrics`): whether the console is served at all (`consoleStanding`), who is asking
 * (`ConsoleAccess`), then the page. Pages read the state file through the same store functions as
 * the CLI; the two forms that write (make a silence, end one) are checked for CSRF first. Every
 * answer forbids framing, sniffing, caching, referrers, and any script or style not served here.
 *
 *   GET  /                 open alerts, grouped             GET  /actions   remediation audit
 *   GET  /alert?fp=…       one alert and its timeline       GET  /sources   jobs, API, outbox
 *   GET  /silences         silences                         GET  /config    the config, redacted
 *   GET  /silences/new     the form (and a preview)         GET|POST /login, POST /logout (token auth)
 *   POST /silences         preview, or create               POST /silences/expire
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/load-config.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { ReadinessCheck } from '../server/health-server.js';
import type { Metrics } from '../server/metrics.js';
import type { Store } from '../state/store.js';
import { ConsoleAccess, CSRF_FIELD, SESSION_COOKIE } from './console-access.js';
import { CONSOLE_ASSETS } from './console-assets.js';
import { consoleStanding } from './console-config.js';
import type { SafeHtml } from './html.js';
import type { PageContext } from './layout.js';
import { actionsPage } from './pages/actions-page.js';
import { alertPage } from './pages/alert-page.js';
import { alertsPage } from './pages/alerts-page.js';
import { configPage } from './pages/config-page.js';
import { loginPage, messagePage } from './pages/login-page.js';
import { draftFrom, newSilencePage } from './pages/new-silence-page.js';
import { silencesPage } from './pages/silences-page.js';
import { sourcesPage } from './pages/sources-page.js';
import { endSilence, submitSilence, type FormOutcome } from './silence-actions.js';

/** What the console reads: the daemon's state file and what the running daemon knows. */
export interface ConsoleDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** The configuration in force (a reload replaces it). */
  config(): Config;
  /** The enabled jobs with their schedule. */
  jobs(): ReadonlyMap<string, string>;
  /** What `/readyz` says now. */
  readiness(): ReadinessCheck[];
}

/**
 * Answers one request if the console is served on this listener (true), or leaves it to the
 * listener's own 404 (false) when the config switches it off.
 */
export type ConsoleRequestHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The largest form taken: a silence's matchers and comment are far smaller. */
const MAX_FORM_BYTES = 64 * 1024;

/** Headers of every console answer. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** Builds the console's request handler; `access` holds this process's key (one per daemon). */
export function createConsoleHandler(deps: ConsoleDeps, access = new ConsoleAccess()): ConsoleRequestHandler {
  const log = deps.logger.child({ stage: 'console' });
  return (req, res) => {
    const config = deps.config();
    const standing = consoleStanding(config.server.listen, config.server.console);
    if (!standing.serve && standing.reason !== 'needs_auth') return false;
    answer(deps, access, config, req, res, standing.serve ? undefined : standing.message).catch((err: unknown) => {
      log.error({ err, path: req.url }, 'console request failed');
      if (!res.headersSent) send(res, 500, messagePage('Error', 'the console could not answer; see the daemon log'));
      else res.destroy();
    });
    return true;
  };
}

async function answer(
  deps: ConsoleDeps,
  access: ConsoleAccess,
  config: Config,
  req: IncomingMessage,
  res: ServerResponse,
  off: string | undefined,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://console.invalid');
  const path = url.pathname;
  const method = req.method ?? 'GET';
  if (off !== undefined) return send(res, 403, messagePage('Console off', `The console is not served: ${off}.`));
  const asset = CONSOLE_ASSETS.get(path);
  if (asset && (method === 'GET' || method === 'HEAD')) {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': 'max-age=300' });
    res.end(asset.text);
    return;
  }
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    res.writeHead(405, { ...SECURITY_HEADERS, allow: 'GET, HEAD, POST' }).end();
    return;
  }
  const auth = config.server.console.auth;
  const log = deps.logger.child({ stage: 'console' });
  if (auth?.token !== undefined && path === '/login') {
    if (method !== 'POST') return send(res, 200, loginPage(access.csrfToken(''), undefined));
    const fields = await readForm(req);
    if (fields === undefined) return tooLarge(res);
    const form = access.checkForm(req.headers, '', fields.get(CSRF_FIELD) ?? undefined);
    if (!form.ok) return send(res, 403, messagePage('Refused', form.message));
    if (!access.tokenMatches(fields.get('token') ?? '', auth.token)) {
      log.warn({ remote: req.socket.remoteAddress }, 'console sign-in with a wrong token');
      return send(res, 401, loginPage(access.csrfToken(''), 'Wrong token.'));
    }
    res.writeHead(303, {
      ...SECURITY_HEADERS,
      location: '/',
      'set-cookie': `${SESSION_COOKIE}=${access.sessionFor(auth.token)}; Path=/; HttpOnly; SameSite=Strict`,
    });
    res.end();
    return;
  }
  const decided = access.decide(req.headers, auth);
  if (!decided.allowed) {
    if (decided.reason !== 'no_credentials') {
      log.warn({ remote: req.socket.remoteAddress, reason: decided.reason, path }, 'console request refused');
    }
    if (auth?.token !== undefined) return send(res, decided.status, loginPage(access.csrfToken(''), decided.message));
    const challenge: Record<string, string> = decided.basicChallenge
      ? { 'www-authenticate': 'Basic realm="deploy-watchdog console", charset="UTF-8"' }
      : {};
    return send(res, decided.status, messagePage('Not allowed', decided.message), challenge);
  }
  const ctx: PageContext = {
    who: decided.who,
    csrf: access.csrfToken(decided.who),
    now: deps.clock.now(),
    session: auth?.token !== undefined && req.headers.authorization === undefined,
  };
  if (method === 'POST') {
    const fields = await readForm(req);
    if (fields === undefined) return tooLarge(res);
    const form = access.checkForm(req.headers, decided.who, fields.get(CSRF_FIELD) ?? undefined);
    if (!form.ok) {
      log.warn({ remote: req.socket.remoteAddress, reason: form.reason, path }, 'console form refused');
      return send(res, 403, messagePage('Refused', form.message));
    }
    const actions = { store: deps.store, config, logger: log };
    if (path === '/silences') return sendOutcome(res, submitSilence(actions, ctx, fields));
    if (path === '/silences/expire') return sendOutcome(res, endSilence(actions, ctx, fields));
    if (path === '/logout') {
      res.writeHead(303, {
        ...SECURITY_HEADERS,
        location: '/login',
        'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
      });
      res.end();
      return;
    }
    return send(res, 404, messagePage('Not found', `nothing to post to at ${path}`));
  }
  const query = url.searchParams;
  const { store } = deps;
  switch (path) {
    case '/':
      return send(res, 200, alertsPage(store, config, ctx, query));
    case '/alert': {
      const fingerprint = query.get('fp') ?? '';
      const body = alertPage(store, config, ctx, fingerprint);
      return body ? send(res, 200, body) : send(res, 404, messagePage('Not found', `no alert ${fingerprint}`));
    }
    case '/silences':
      return send(res, 200, silencesPage(store, ctx, query));
    case '/silences/new':
      return send(res, 200, newSilencePage(store, config, ctx, draftFrom(query), { preview: query.has('matchers') }));
    case '/actions':
      return send(res, 200, actionsPage(store, ctx, query));
    case '/sources':
      return send(
        res,
        200,
        await sourcesPage(
          { store, config, metrics: deps.metrics, jobs: deps.jobs(), readiness: deps.readiness() },
          ctx,
        ),
      );
    case '/config':
      return send(res, 200, configPage(config, ctx));
    default:
      return send(res, 404, messagePage('Not found', `there is no page ${path}`));
  }
}

/** A form past {@link MAX_FORM_BYTES}: refused, and the connection closed rather than the rest read. */
function tooLarge(res: ServerResponse): void {
  send(res, 413, messagePage('Too large', 'the form is too large'), { connection: 'close' });
}

function sendOutcome(res: ServerResponse, outcome: FormOutcome): void {
  if ('redirect' in outcome) {
    res.writeHead(303, { ...SECURITY_HEADERS, location: outcome.redirect }).end();
    return;
  }
  send(res, outcome.status, outcome.body);
}

function send(res: ServerResponse, status: number, body: SafeHtml, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(String(body));
}

/**
 * The fields of an `application/x-www-form-urlencoded` body, or undefined when it is larger than
 * {@link MAX_FORM_BYTES}. Any other type reads as no fields (and so fails the CSRF check).
 */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return new URLSearchParams();
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
