/**
 * The web console's requests, on the health listener (everything but `/healthz`, `/readyz` and
 * `/metrics`): whether the console is served at all (`consoleServing`), who is asking
 * (`ConsoleAccess`), then the page. Pages read the state file through the same store functions as
 * the CLI; the forms that write (make a silence, end one, acknowledge an alert or give it back)
 * are checked for CSRF first. Every
 * answer forbids framing, sniffing, caching, referrers, and any script or style not served here.
 *
 *   GET  /                 open alerts, grouped             GET  /actions   remediation audit
 *   GET  /alert?fp=…       one alert and its timeline       GET  /sources   jobs, API, outbox
 *   GET  /silences         silences                         GET  /config    the config, redacted
 *   GET  /silences/new     the form (and a preview)         GET|POST /login, POST /logout (token auth)
 *   POST /silences         preview, or create               POST /silences/expire
 *   POST /alerts/acknowledge, /alerts/unacknowledge           an alert taken, or given back
 *   POST /alerts/remediate                                    a remediation policy's action, asked for
 */
import { FencedError } from '../state/fenced-error.js';
import { StoreError } from '../state/store-error.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/load-config.js';
import type { Secret } from '../lib/secret.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';
import type { RequestHandler } from '../server/health-server.js';
import type { ReadinessCheck } from '../server/readiness-check.js';
import type { Store } from '../state/store.js';
import { ConsoleAccess, CSRF_FIELD, SESSION_COOKIE } from './console-access.js';
import { CONSOLE_ASSETS } from './console-assets.js';
import type { SafeHtml } from './html.js';
import { messagePage, type PageContext } from './layout.js';
import { actionsPage } from './pages/actions-page.js';
import { alertPage, type PageNotice } from './pages/alert-page.js';
import { alertsPage } from './pages/alerts-page.js';
import { configPage } from './pages/config-page.js';
import { loginPage } from './pages/login-page.js';
import { draftFrom, newSilencePage } from './pages/new-silence-page.js';
import { silencesPage } from './pages/silences-page.js';
import { sourcesPage, type DaemonFigures } from './pages/sources-page.js';
import { endSilence, submitSilence, type FormOutcome } from './silence-actions.js';
import { submitAcknowledgement } from './acknowledge-actions.js';
import { submitRemediation, type ConsoleRemediation } from './remediate-actions.js';
import { consoleServing, mayRemediate } from '../config/console-config.js';
import { readBody } from '../lib/read-body.js';
import { RepeatedLog } from '../lib/repeated-log.js';

/** What the console reads: the daemon's state file and what the running daemon knows. */
export interface ConsoleDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The configuration in force (a reload replaces it). */
  config(): Config;
  /** The enabled jobs with their schedule. */
  jobs(): ReadonlyMap<string, string>;
  /** What the sources page shows of the running daemon (on the console's thread: as the main thread judges it, or last judged). */
  figures(): Promise<DaemonFigures>;
  /**
   * What the running configuration has built: its notifier (woken for an acknowledgement to route)
   * and its remediator (asked for a policy's action); absent: routed at the next round, no remediation.
   */
  runtime?(): { notifier: { wake(): void }; remediation: ConsoleRemediation | undefined };
}

/**
 * The figures of the running daemon now: readiness judged (`judge` never throws: a judgement that
 * fails is one failed check that says why), and the counters' values as plain data, which crosses
 * to the console's thread.
 */
export async function daemonFigures(
  metrics: Pick<Metrics, 'apiRequests' | 'apiErrors'>,
  judge: () => ReadinessCheck[],
): Promise<DaemonFigures> {
  const readiness = judge();
  const [requests, errors] = await Promise.all([metrics.apiRequests.get(), metrics.apiErrors.get()]);
  const values = (v: typeof requests.values) => v.map(({ labels, value }) => ({ labels: { ...labels }, value }));
  return { readiness, apiRequests: values(requests.values), apiErrors: values(errors.values) };
}

/** The largest form taken: a silence's matchers and comment are far smaller. */
const MAX_FORM_BYTES = 64 * 1024;
/**
 * The longest a page or a form waits for a PostgreSQL state, all its statements together: a server
 * that hangs makes the console say so in that time, rather than wait out the statement timeout
 * (30 s by default) per statement. SQLite's calls wait on no server.
 */
export const CONSOLE_WAIT_MS = 5_000;

/** Headers of every console answer. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/**
 * Builds the console's request handler, which answers a request if the console is served on this
 * listener (true), or leaves it to the listener's own 404 (false) when the config switches it off;
 * `access` holds this process's key (one per daemon).
 */
export function createConsoleHandler(deps: ConsoleDeps, access = new ConsoleAccess()): RequestHandler {
  const log = deps.logger.child({ stage: 'console' });
  // Anyone who reaches the listener can send wrong credentials or forged forms by the thousand:
  // said once a minute with a count, so they cannot flood the daemon's log.
  const refusals = new RepeatedLog(log, { clock: deps.clock });
  return (req, res) => {
    const config = deps.config();
    const serving = consoleServing(config.server.listen, config.server.console);
    if (!serving.serve && serving.reason !== 'needs_auth') return false;
    const request: ConsoleRequest = { deps, access, config, log, refusals, req, res };
    const answered = serving.serve
      ? answer(request)
      : Promise.resolve(send(res, 403, messagePage('Console off', `The console is not served: ${serving.message}.`)));
    answered.catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      // A write while this replica hands over the lead: nothing written, and it passes in seconds.
      if (err instanceof FencedError) {
        log.warn({ path: req.url, reason: err.reason }, 'console write refused: this replica no longer leads');
        return send(res, 503, messagePage('Not written', `${err.message}. Try again in a few seconds.`));
      }
      // The state's server is down or hangs: said as such, not as the console's own failure.
      if (err instanceof StoreError && (err.reason === 'timeout' || err.reason === 'unreachable')) {
        log.warn({ path: req.url, err: err.message }, 'console request not answered: the state does not answer');
        return send(res, 503, messagePage('The state does not answer', `${err.message}. Try again in a few seconds.`));
      }
      log.error({ err, path: req.url }, 'console request failed');
      send(res, 500, messagePage('Error', 'the console could not answer; see the daemon log'));
    });
    return true;
  };
}

/** One request and what answering it needs. */
interface ConsoleRequest {
  deps: ConsoleDeps;
  access: ConsoleAccess;
  /** The configuration in force when the request came. */
  config: Config;
  log: Logger;
  /** Where refused requests and forms are logged (`RepeatedLog`). */
  refusals: RepeatedLog;
  req: IncomingMessage;
  res: ServerResponse;
}

/** Static files to anyone; the login page under token auth; every other page to who may see it. */
async function answer(r: ConsoleRequest): Promise<void> {
  const { req, res, access, config } = r;
  const url = new URL(req.url ?? '/', 'http://console.invalid');
  const method = req.method ?? 'GET';
  const asset = CONSOLE_ASSETS.get(url.pathname);
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
  if (auth?.token !== undefined && url.pathname === '/login') return signIn(r, auth.token);
  const decided = access.decide(req.headers, auth);
  if (!decided.allowed) {
    if (decided.reason !== 'no_credentials') logRefusal(r, decided.reason, url.pathname, 'console request refused');
    if (auth?.token !== undefined) return send(res, decided.status, loginPage(access.csrfToken(''), decided.message));
    const challenge: Record<string, string> = decided.basicChallenge
      ? { 'www-authenticate': 'Basic realm="deploy-watchdog console", charset="UTF-8"' }
      : {};
    return send(res, decided.status, messagePage('Not allowed', decided.message), challenge);
  }
  const remediation = r.deps.runtime?.().remediation;
  const ctx: PageContext = {
    store: r.deps.store,
    config,
    who: decided.who,
    csrf: access.csrfToken(decided.who),
    now: r.deps.clock.now(),
    session: auth?.token !== undefined && req.headers.authorization === undefined,
    ...(remediation && mayRemediate(config.server.console, decided.who)
      ? { remedyOf: (fingerprint: string) => remediation.offer(fingerprint) }
      : {}),
  };
  if (method === 'POST') return post(r, ctx, url.pathname);
  const [status, body] = await page(r, ctx, url);
  send(res, status, body);
}

/** `GET /login` shows the form; `POST /login` with the token sets the session cookie. */
async function signIn(r: ConsoleRequest, token: Secret): Promise<void> {
  const { req, res, access } = r;
  if (req.method !== 'POST') return send(res, 200, loginPage(access.csrfToken(''), undefined));
  const fields = await checkedForm(r, '', '/login');
  if (fields === undefined) return;
  if (!access.tokenMatches(fields.get('token') ?? '', token)) {
    r.refusals.warn({ remote: req.socket.remoteAddress }, 'console sign-in with a wrong token');
    return send(res, 401, loginPage(access.csrfToken(''), 'Wrong token.'));
  }
  redirect(res, '/', sessionCookie(req, access.startSession(token)));
}

/** A form: refused unless it carries this visitor's CSRF token from this site (`checkedForm`), then acted on. */
async function post(r: ConsoleRequest, ctx: PageContext, path: string): Promise<void> {
  const { req, res } = r;
  const fields = await checkedForm(r, ctx.who, path);
  if (fields === undefined) return;
  const runtime = r.deps.runtime?.();
  const wake = runtime ? () => runtime.notifier.wake() : undefined;
  const deps = { logger: r.log, wake, remediation: runtime?.remediation };
  const within = (submit: () => FormOutcome) => ctx.store.within(CONSOLE_WAIT_MS, submit);
  let outcome: FormOutcome;
  if (path === '/silences') outcome = within(() => submitSilence(deps, ctx, fields));
  else if (path === '/silences/expire') outcome = within(() => endSilence(deps, ctx, fields));
  else if (path === '/alerts/acknowledge')
    outcome = within(() => submitAcknowledgement(deps, ctx, fields, 'acknowledge'));
  else if (path === '/alerts/unacknowledge')
    outcome = within(() => submitAcknowledgement(deps, ctx, fields, 'unacknowledge'));
  else if (path === '/alerts/remediate') outcome = await submitRemediation(deps, ctx, fields);
  else if (path === '/logout') {
    r.access.endSession(req.headers.cookie);
    outcome = { redirect: '/login' };
  } else outcome = { status: 404, body: messagePage('Not found', `nothing to post to at ${path}`) };
  if (!('redirect' in outcome)) return send(res, outcome.status, outcome.body);
  const signOut = path === '/logout' ? sessionCookie(req, '', '; Max-Age=0') : undefined;
  redirect(res, outcome.redirect, signOut);
}

/**
 * The session cookie's header: `Secure` when the browser is on https (its form's Origin, through a
 * TLS proxy), so the token's session never travels in clear to an http address of the same host.
 */
function sessionCookie(req: IncomingMessage, value: string, extra = ''): string {
  const secure = req.headers.origin?.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${extra}${secure}`;
}

/** The pages a GET answers 200 from the query alone. */
const PAGES: ReadonlyMap<string, (ctx: PageContext, query: URLSearchParams) => SafeHtml> = new Map([
  ['/', (ctx, query) => alertsPage(ctx, query, doneNotice(query.get('done')))],
  ['/silences', silencesPage],
  ['/silences/new', (ctx, query) => newSilencePage(ctx, draftFrom(query), { preview: query.has('matchers') })],
  ['/actions', actionsPage],
  ['/config', configPage],
]);

/** The page at a GET's path, with its status. */
async function page(r: ConsoleRequest, ctx: PageContext, url: URL): Promise<[number, SafeHtml]> {
  const query = url.searchParams;
  const plain = PAGES.get(url.pathname);
  if (plain) return [200, ctx.store.within(CONSOLE_WAIT_MS, () => plain(ctx, query))];
  if (url.pathname === '/alert') {
    const fingerprint = query.get('fp') ?? '';
    const body = ctx.store.within(CONSOLE_WAIT_MS, () =>
      alertPage(ctx, fingerprint, doneNotice(query.get('done')), query),
    );
    return body ? [200, body] : [404, messagePage('Not found', `no alert ${fingerprint}`)];
  }
  if (url.pathname !== '/sources') return [404, messagePage('Not found', `there is no page ${url.pathname}`)];
  return [200, sourcesPage({ ...(await r.deps.figures()), jobs: r.deps.jobs() }, ctx)];
}

/** What a form just did, said on the page it sent the browser back to (`?done=`). */
const DONE_NOTICES: ReadonlyMap<string, string> = new Map([
  ['acknowledged', 'You acknowledged it: its repeats stop until it resolves or gets worse.'],
  ['unacknowledged', 'You gave the acknowledgement back: its repeats resume.'],
  ['remediation', 'Asked: the attempt is being sent; its outcome will be shown under Remediation below.'],
  [
    'remediation-asked',
    'Asked: the daemon is busy and decides in a moment, by its policy; what it decides and the outcome will be shown under Remediation below.',
  ],
]);

/** The notice of `?done=`, if it names one. */
function doneNotice(done: string | null): PageNotice | undefined {
  const text = DONE_NOTICES.get(done ?? '');
  return text === undefined ? undefined : { kind: 'ok', text };
}

function redirect(res: ServerResponse, location: string, cookie?: string): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location, ...(cookie === undefined ? {} : { 'set-cookie': cookie }) });
  res.end();
}

function send(res: ServerResponse, status: number, body: SafeHtml, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(String(body));
}

/**
 * The fields of an `application/x-www-form-urlencoded` body that carries `who`'s CSRF token from
 * this site (`ConsoleAccess.checkForm`); else undefined, the refusal answered (and logged): a 413
 * past {@link MAX_FORM_BYTES}, a 403 otherwise. Any other type reads as no fields (and so fails
 * the CSRF check).
 */
async function checkedForm(r: ConsoleRequest, who: string, path: string): Promise<URLSearchParams | undefined> {
  const { req, res } = r;
  const body = await readBody(req, MAX_FORM_BYTES);
  if (body === undefined) {
    // Past the limit: refused, and the connection closed rather than the rest read.
    send(res, 413, messagePage('Too large', 'the form is too large'), { connection: 'close' });
    return undefined;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  const fields = new URLSearchParams(type === 'application/x-www-form-urlencoded' ? body : '');
  const form = r.access.checkForm(
    req.headers,
    who,
    fields.get(CSRF_FIELD) ?? undefined,
    r.config.server.console.public_url,
  );
  if (form.ok) return fields;
  logRefusal(r, form.reason, path, 'console form refused');
  send(res, 403, messagePage('Refused', form.message));
  return undefined;
}

/** A request or form refused, and why: logged once a minute with a count (`refusals`). */
function logRefusal(r: ConsoleRequest, reason: string, path: string, message: string): void {
  r.refusals.warn({ remote: r.req.socket.remoteAddress, reason, code: reason, path }, message);
}
