/**
 * The console's access rules over HTTP, against real daemons: open on loopback (but not to a
 * rebound host name), not served on a wide listener without auth (health and metrics go on), a
 * token (bearer or the login page's session) and basic auth (401 for wrong credentials), and
 * forms refused without their CSRF token or from another origin, writing nothing. The config page
 * shows no secret. Browsers' side of it (a form posted from another origin) is in
 * console-hostile.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listSilences } from '../../src/alerts/silences.js';
import { captureLogger } from '../app/fixtures.js';
import { call, csrfIn, startConsoleDaemon, type ConsoleDaemon } from './console-fixture.js';

const TOKEN = 'console-token-5f0c2b7e91aa';
const PASSWORD = 'console-password-77d1c0ffee';
// Loopback addresses nothing answers on: a send fails at once and never leaves the machine.
const WEBHOOK = 'http://127.0.0.1:9/services/T000/B000/secret-webhook-path';
const SMTP_PASSWORD = 'smtp-password-9a8b7c6d';
const HEARTBEAT = 'http://127.0.0.1:9/ping/secret-heartbeat-uuid';

const silenceForm = (csrf: string | undefined, comment = 'planned maintenance') => ({
  ...(csrf === undefined ? {} : { csrf }),
  intent: 'create',
  matchers: 'check=backups',
  previewed: JSON.stringify(['check=backups']),
  duration: '1h',
  comment,
});

const silencesIn = (daemon: ConsoleDaemon) =>
  listSilences(daemon.wd.store, { now: daemon.clock.now(), includeExpired: true });

describe('open on loopback', () => {
  let daemon: ConsoleDaemon;
  beforeAll(async () => {
    daemon = await startConsoleDaemon();
  });
  afterAll(() => daemon?.close());

  it('serves the pages on loopback, with headers that keep scripts, frames and caches out', async () => {
    const page = await call(daemon, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('refuses a request naming another host (DNS rebinding)', async () => {
    const page = await call(daemon, '/', { headers: { host: `attacker.example:${daemon.port}` } });
    expect(page.status).toBe(403);
    expect(page.text).toContain('open to loopback only');
  });

  it('leaves /healthz, /readyz and /metrics as they are', async () => {
    expect((await call(daemon, '/healthz')).status).toBe(200);
    // Readiness as the main thread last published it: judged again within a second of being asked.
    await vi.waitFor(async () => expect((await call(daemon, '/readyz')).status).toBe(200), { timeout: 10_000 });
    expect((await call(daemon, '/metrics')).text).toContain('deploy_watchdog_cycles_total');
    expect((await call(daemon, '/healthz', { method: 'POST' })).status).toBe(405);
  });

  it.each<[string, (csrf: string) => Record<string, string>, Record<string, string>, string]>([
    ['without its CSRF token', () => silenceForm(undefined), {}, 'no CSRF token'],
    ['with a wrong CSRF token', () => silenceForm('forged-token'), {}, 'stale'],
    ['from another origin', (csrf) => silenceForm(csrf), { origin: 'http://attacker.example' }, 'another origin'],
    ['from another site', (csrf) => silenceForm(csrf), { 'sec-fetch-site': 'cross-site' }, 'another site'],
  ])('refuses a form %s (403) and writes nothing', async (_name, form, headers, message) => {
    const csrf = csrfIn((await call(daemon, '/silences/new')).text);
    const before = silencesIn(daemon).length;
    const res = await call(daemon, '/silences', { form: form(csrf), headers });
    expect(res.status).toBe(403);
    expect(res.text).toContain(message);
    const expire = await call(daemon, '/silences/expire', { form: { id: 'x', comment: 'why' }, headers });
    expect(expire.status).toBe(403);
    expect(silencesIn(daemon)).toHaveLength(before);
  });

  it('previews a pathological pattern from any page at once, and goes on answering (RE2)', async () => {
    // What an <img> on any web page the operator opens can make the browser ask: on a backtracking
    // engine this preview froze the daemon with one alert open.
    expect(daemon.wd.store.db.prepare('SELECT COUNT(*) AS n FROM alerts').get()).not.toEqual({ n: 0 });
    const pattern = encodeURIComponent('check=~(.?.?.?.?.?.?.?.?.?.?.?)*X');
    const preview = await call(daemon, `/silences/new?matchers=${pattern}`);
    expect(preview.status).toBe(200);
    expect((await call(daemon, '/healthz')).status).toBe(200);
    const lookahead = await call(daemon, `/silences/new?matchers=${encodeURIComponent('check=~(?=b)backups')}`);
    expect(lookahead.text).toContain('not a regular expression RE2 takes');
  });

  it('acts on a form with its CSRF token, recording console@loopback', async () => {
    const csrf = csrfIn((await call(daemon, '/silences/new')).text);
    const res = await call(daemon, '/silences', { form: silenceForm(csrf) });
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/silences\?created=[0-9a-f]{12}$/);
    expect(silencesIn(daemon)[0]).toMatchObject({ createdBy: 'console@loopback', reason: 'planned maintenance' });
  });

  it('makes a silence of a value with a hidden character typed in the form, as the preview wrote it out', async () => {
    const csrf = csrfIn((await call(daemon, '/silences/new')).text);
    const typed = { csrf, matchers: 'app=shop\u202egnp.exe', duration: '1h', comment: 'a tricky name' };
    const preview = await call(daemon, '/silences', { form: { ...typed, intent: 'preview' } });
    // What the page gives back, as the browser would send it again.
    const field = (re: RegExp) =>
      (re.exec(preview.text)?.[1] ?? '')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
    const shown = field(/<textarea name="matchers"[^>]*>([^<]*)<\/textarea>/);
    expect(shown).toBe('app=shop\\u{202e}gnp.exe');
    const previewed = field(/name="previewed" value="([^"]*)"/);
    const res = await call(daemon, '/silences', { form: { ...typed, matchers: shown, previewed, intent: 'create' } });
    expect(res.status).toBe(303);
    expect(silencesIn(daemon).find((x) => x.reason === 'a tricky name')?.matchers).toEqual([
      { name: 'app', op: '=', value: 'shop\u202egnp.exe' },
    ]);
  });
});

describe('a maintenance window planned in the console', () => {
  let daemon: ConsoleDaemon;
  beforeAll(async () => {
    daemon = await startConsoleDaemon();
  });
  afterAll(() => daemon?.close());

  it('previews and makes a silence that starts later, shown as scheduled until its start', async () => {
    const start = new Date(daemon.clock.now() + 2 * 3_600_000).toISOString().slice(0, 16);
    const csrf = csrfIn((await call(daemon, '/silences/new')).text);
    const preview = await call(daemon, '/silences', {
      form: { ...silenceForm(csrf), intent: 'preview', starts: start },
    });
    expect(preview.text).toContain('Scheduled: from');
    expect(preview.text).toMatch(/it mutes\s+nothing before then/);
    const res = await call(daemon, '/silences', { form: { ...silenceForm(csrf), starts: start } });
    expect(res.status).toBe(303);
    const [made] = silencesIn(daemon);
    expect(made).toMatchObject({ startsAt: Date.parse(`${start}Z`), endsAt: Date.parse(`${start}Z`) + 3_600_000 });
    const list = await call(daemon, '/silences');
    expect(list.text).toMatch(new RegExp(`id="silence-${made!.id}"\\s+class="silence state-scheduled`));
    daemon.clock.advance(2 * 3_600_000);
    expect((await call(daemon, '/silences')).text).toMatch(
      new RegExp(`id="silence-${made!.id}"\\s+class="silence state-active`),
    );
  });

  it('refuses a start that is not a time, making nothing', async () => {
    const csrf = csrfIn((await call(daemon, '/silences/new')).text);
    const before = silencesIn(daemon).length;
    const res = await call(daemon, '/silences', { form: { ...silenceForm(csrf), starts: 'tomorrow' } });
    expect(res.status).toBe(400);
    expect(res.text).toContain('start: &quot;tomorrow&quot; is not a time');
    expect(silencesIn(daemon)).toHaveLength(before);
  });
});

describe('a wide listener', () => {
  let daemon: ConsoleDaemon;
  const log = captureLogger('warn');
  beforeAll(async () => {
    // Bound on every interface (as in a container), asked on loopback only.
    daemon = await startConsoleDaemon({ server: (port) => `{ listen: "0.0.0.0:${port}" }`, logger: log.logger });
  });
  afterAll(() => daemon?.close());

  it('without auth serves no console page, saying what to set, and health and metrics as before', async () => {
    for (const path of ['/', '/silences', '/config', '/login']) {
      const page = await call(daemon, path);
      expect(page.status).toBe(403);
      expect(page.text).toContain('needs server.console.auth');
    }
    const post = await call(daemon, '/silences', { form: silenceForm('x') });
    expect(post.status).toBe(403);
    expect(silencesIn(daemon)).toEqual([]);
    expect((await call(daemon, '/healthz')).status).toBe(200);
    expect((await call(daemon, '/metrics')).status).toBe(200);
    // Said once at start, where an operator looks.
    expect(log.lines().filter((l) => String(l.msg).startsWith('the web console is not served'))).toHaveLength(1);
  });
});

describe('a token', () => {
  let daemon: ConsoleDaemon;
  const log = captureLogger('warn');
  beforeAll(async () => {
    daemon = await startConsoleDaemon({
      logger: log.logger,
      server: (port) =>
        `{ listen: "0.0.0.0:${port}", console: { enabled: true, auth: { token: "\${CONSOLE_TOKEN}" } } }`,
      notify: [
        'notify:',
        '  channels:',
        '    - { name: ops-slack, type: slack, webhook_url: "${WEBHOOK}" }',
        '    - { name: ops-mail, type: email, smtp: { host: 127.0.0.1, port: 9, secure: none, auth: { user: ops, pass: "${SMTP_PASSWORD}" } }, from: w@example.com, to: [ops@example.com] }',
        '  routes: [{ channels: [ops-slack] }]',
        '  heartbeat: { url: "${HEARTBEAT}" }',
      ].join('\n'),
      env: { CONSOLE_TOKEN: TOKEN, WEBHOOK, SMTP_PASSWORD, HEARTBEAT },
    });
  });
  afterAll(() => daemon?.close());

  it.each([
    ['nothing', {}, 'sign in'],
    ['a wrong bearer token', { authorization: 'Bearer console-token-wrong-00000' }, 'wrong token'],
    ['a forged session cookie', { cookie: 'dw_console=forged' }, 'sign in again'],
    ['basic auth', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }, 'sign in'],
  ])('answers %s with 401 and the sign-in form', async (_name, headers, message) => {
    const page = await call(daemon, '/silences', { headers });
    expect(page.status).toBe(401);
    expect(page.text).toContain(message);
    expect(page.text).toContain('name="token"');
  });

  it('logs a stream of wrong tokens once a minute with a count, not once a request', async () => {
    const refused = () => log.lines().filter((l) => String(l.msg).startsWith('console request refused'));
    // A minute after the refusals of the tests above, so the first of these is said.
    daemon.clock.advance(61_000);
    const before = refused().length;
    for (let i = 0; i < 20; i++) {
      const page = await call(daemon, '/', { headers: { authorization: `Bearer guess-${i}-0000000000000` } });
      expect(page.status).toBe(401);
    }
    await vi.waitFor(() => expect(refused().length).toBeGreaterThan(before));
    expect(refused().length - before).toBe(1);
    daemon.clock.advance(61_000);
    await call(daemon, '/', { headers: { authorization: 'Bearer guess-last-000000000000' } });
    await vi.waitFor(() => expect(refused().length - before).toBe(2));
    expect(refused().at(-1)).toMatchObject({ repeated: 20 });
    expect(log.text()).not.toContain(TOKEN);
  });

  it('marks the session cookie Secure when the sign-in came over https (a TLS proxy)', async () => {
    const csrf = csrfIn((await call(daemon, '/login')).text);
    const proxied = { host: 'watchdog.example.com', origin: 'https://watchdog.example.com' };
    const right = await call(daemon, '/login', { form: { csrf, token: TOKEN }, headers: proxied });
    expect(right.status).toBe(303);
    expect(String(right.headers['set-cookie'])).toMatch(
      /^dw_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/,
    );
    const session = { cookie: String(right.headers['set-cookie']).split(';')[0]!, ...proxied };
    const page = await call(daemon, '/', { headers: session });
    const out = await call(daemon, '/logout', { form: { csrf: csrfIn(page.text) }, headers: session });
    expect(String(out.headers['set-cookie'])).toMatch(/; Secure$/);
  });

  it('lets the token in as a bearer, and records writes as console@token', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const page = await call(daemon, '/silences/new', { headers: auth });
    expect(page.status).toBe(200);
    const res = await call(daemon, '/silences', { form: silenceForm(csrfIn(page.text)), headers: auth });
    expect(res.status).toBe(303);
    expect(silencesIn(daemon)[0]).toMatchObject({ createdBy: 'console@token' });
  });

  it('signs in at the login page with a session cookie; a wrong token is 401', async () => {
    const login = await call(daemon, '/login');
    const csrf = csrfIn(login.text);
    const wrong = await call(daemon, '/login', { form: { csrf, token: 'console-token-wrong-00000' } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong token');
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const noCsrf = await call(daemon, '/login', { form: { token: TOKEN } });
    expect(noCsrf.status).toBe(403);
    const right = await call(daemon, '/login', { form: { csrf, token: TOKEN } });
    expect(right.status).toBe(303);
    const cookie = String(right.headers['set-cookie']);
    expect(cookie).toMatch(/^dw_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(TOKEN);
    const session = { cookie: cookie.split(';')[0]! };
    const page = await call(daemon, '/', { headers: session });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign out');
    const out = await call(daemon, '/logout', { form: { csrf: csrfIn(page.text) }, headers: session });
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/login');
    expect(String(out.headers['set-cookie'])).toMatch(/^dw_console=; .*Max-Age=0$/);
    // Signed out is over: the cookie, kept or stolen, no longer lets anyone in.
    expect((await call(daemon, '/', { headers: session })).status).toBe(401);
  });

  it('shows the config with every secret as <secret>', async () => {
    const page = await call(daemon, '/config', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.status).toBe(200);
    for (const secret of [TOKEN, WEBHOOK, SMTP_PASSWORD, HEARTBEAT, daemon.sim.adminToken]) {
      expect(page.text).not.toContain(secret);
    }
    expect(page.text.match(/&lt;secret&gt;/g)?.length).toBeGreaterThanOrEqual(5);
    expect(page.text).toContain('webhook_url: &lt;secret&gt;');
  });
});

describe('basic auth', () => {
  let daemon: ConsoleDaemon;
  beforeAll(async () => {
    daemon = await startConsoleDaemon({
      server: (port) => `{ listen: "127.0.0.1:${port}", console: { auth: { user: alice, password: "\${PASSWORD}" } } }`,
      env: { PASSWORD },
    });
  });
  afterAll(() => daemon?.close());

  const basic = (user: string, password: string) => ({
    authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  });

  it.each([
    ['nothing', {}],
    ['a wrong password', basic('alice', 'wrong-password-000000')],
    ['a wrong user', basic('bob', PASSWORD)],
  ])('answers %s with 401 and a basic-auth challenge', async (_name, headers) => {
    const page = await call(daemon, '/', { headers });
    expect(page.status).toBe(401);
    expect(page.headers['www-authenticate']).toBe('Basic realm="deploy-watchdog console", charset="UTF-8"');
  });

  it('lets the user in, even on loopback, and records writes and expiries with their name and why', async () => {
    const auth = basic('alice', PASSWORD);
    const page = await call(daemon, '/silences/new', { headers: auth });
    expect(page.status).toBe(200);
    const csrf = csrfIn(page.text);
    await call(daemon, '/silences', { form: silenceForm(csrf), headers: auth });
    const [silence] = silencesIn(daemon);
    expect(silence).toMatchObject({ createdBy: 'alice' });
    const missing = await call(daemon, '/silences/expire', {
      form: { csrf, id: silence!.id, comment: ' ' },
      headers: auth,
    });
    expect(missing.status).toBe(400);
    expect(silencesIn(daemon)[0]?.expiredAt).toBeNull();
    const res = await call(daemon, '/silences/expire', {
      form: { csrf, id: silence!.id, comment: 'maintenance over' },
      headers: auth,
    });
    expect(res.status).toBe(303);
    expect(silencesIn(daemon)[0]).toMatchObject({ expiredBy: 'alice', expireReason: 'maintenance over' });
  });
});
