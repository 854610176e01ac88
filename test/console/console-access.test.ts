/**
 * The console's access rules as tables: who a request is from under each kind of auth, whether a
 * form is acted on, whether the console is served on a listener, and the configurations refused.
 */
import { describe, expect, it } from 'vitest';
import type { IncomingHttpHeaders } from 'node:http';
import { ConsoleAccess, LOOPBACK_USER, SESSION_LIFETIME_MS, TOKEN_USER } from '../../src/console/console-access.js';
import { consoleServing, isLoopbackListen, type ConsoleConfig } from '../../src/config/console-config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { parseConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/lib/secret.js';

const TOKEN = 'console-token-0123456789';
const PASSWORD = 'basic-password-0123456789';
const access = new ConsoleAccess(Buffer.alloc(32, 7));
const tokenAuth: ConsoleConfig['auth'] = { token: new Secret(TOKEN) };
const basicAuth: ConsoleConfig['auth'] = { user: 'alice', password: new Secret(PASSWORD) };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('ConsoleAccess.decide', () => {
  it.each<[string, ConsoleConfig['auth'], IncomingHttpHeaders, string]>([
    ['loopback, by 127.0.0.1', undefined, { host: '127.0.0.1:9464' }, LOOPBACK_USER],
    ['loopback, by localhost', undefined, { host: 'localhost:9464' }, LOOPBACK_USER],
    ['loopback, by [::1]', undefined, { host: '[::1]:9464' }, LOOPBACK_USER],
    ['loopback, by LOCALHOST', undefined, { host: 'LOCALHOST:9464' }, LOOPBACK_USER],
    ['token as a bearer', tokenAuth, { authorization: `Bearer ${TOKEN}` }, TOKEN_USER],
    [
      'token session cookie',
      tokenAuth,
      { cookie: `a=b; dw_console=${access.startSession(new Secret(TOKEN))}` },
      TOKEN_USER,
    ],
    ['basic user', basicAuth, { authorization: basic('alice', PASSWORD) }, 'alice'],
  ])('lets in: %s', (_name, auth, headers, who) => {
    expect(access.decide(headers, auth)).toEqual({ allowed: true, who });
  });

  it.each<[string, ConsoleConfig['auth'], IncomingHttpHeaders, number, string]>([
    ['loopback, a rebound name', undefined, { host: 'attacker.example:9464' }, 403, 'host_not_loopback'],
    ['loopback, a name that starts as one', undefined, { host: '127.0.0.1.nip.io' }, 403, 'host_not_loopback'],
    ['loopback, no Host', undefined, {}, 403, 'host_not_loopback'],
    ['token, nothing given', tokenAuth, {}, 401, 'no_credentials'],
    ['token, wrong bearer', tokenAuth, { authorization: 'Bearer console-token-wrong-0000' }, 401, 'wrong_credentials'],
    ['token, a prefix of it', tokenAuth, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 401, 'wrong_credentials'],
    ['token, forged cookie', tokenAuth, { cookie: 'dw_console=forged' }, 401, 'wrong_credentials'],
    [
      "token, another process's cookie",
      tokenAuth,
      { cookie: `dw_console=${new ConsoleAccess().startSession(new Secret(TOKEN))}` },
      401,
      'wrong_credentials',
    ],
    ['token, sent as basic', tokenAuth, { authorization: basic('x', TOKEN) }, 401, 'no_credentials'],
    ['basic, nothing given', basicAuth, {}, 401, 'no_credentials'],
    ['basic, wrong password', basicAuth, { authorization: basic('alice', 'nope') }, 401, 'wrong_credentials'],
    ['basic, wrong user', basicAuth, { authorization: basic('bob', PASSWORD) }, 401, 'wrong_credentials'],
    [
      'basic, no colon',
      basicAuth,
      { authorization: `Basic ${Buffer.from('alice').toString('base64')}` },
      401,
      'wrong_credentials',
    ],
    ['basic, the token kind', basicAuth, { authorization: `Bearer ${PASSWORD}` }, 401, 'no_credentials'],
  ])('refuses: %s', (_name, auth, headers, status, reason) => {
    expect(access.decide(headers, auth)).toMatchObject({ allowed: false, status, reason });
  });

  it('asks the browser for basic auth, and only under basic auth', () => {
    expect(access.decide({}, basicAuth)).toMatchObject({ basicChallenge: true });
    expect(access.decide({}, tokenAuth)).toMatchObject({ basicChallenge: false });
  });

  it('gives each sign-in a session of its own, and signing out ends that one alone', () => {
    const token = new Secret(TOKEN);
    const [mine, theirs] = [access.startSession(token), access.startSession(token)];
    expect(mine).not.toBe(theirs);
    access.endSession(`a=b; dw_console=${mine}`);
    expect(access.decide({ cookie: `dw_console=${mine}` }, tokenAuth)).toMatchObject({
      allowed: false,
      reason: 'wrong_credentials',
    });
    expect(access.decide({ cookie: `dw_console=${theirs}` }, tokenAuth)).toEqual({ allowed: true, who: TOKEN_USER });
  });

  it('ends a session 12 hours after its sign-in, signed out or not', () => {
    let now = Date.UTC(2026, 10, 29, 8);
    const timed = new ConsoleAccess(Buffer.alloc(32, 7), () => now);
    const cookie = { cookie: `dw_console=${timed.startSession(new Secret(TOKEN))}` };
    now += SESSION_LIFETIME_MS - 1;
    expect(timed.decide(cookie, tokenAuth)).toEqual({ allowed: true, who: TOKEN_USER });
    now += 1;
    expect(timed.decide(cookie, tokenAuth)).toMatchObject({
      allowed: false,
      reason: 'wrong_credentials',
      message: expect.stringContaining('12 hours after sign-in'),
    });
  });

  it('ends every session when the token changes', () => {
    const cookie = { cookie: `dw_console=${access.startSession(new Secret(TOKEN))}` };
    expect(access.decide(cookie, { token: new Secret('another-token-0123456789') })).toMatchObject({
      allowed: false,
      reason: 'wrong_credentials',
    });
  });
});

describe('ConsoleAccess.checkForm', () => {
  const host = '127.0.0.1:9464';
  const good = access.csrfToken('alice');
  it.each<[string, IncomingHttpHeaders, string | undefined, string | undefined]>([
    ['a same-origin form', { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }, good, undefined],
    ['a script without browser headers', { host }, good, undefined],
    ['another site', { host, 'sec-fetch-site': 'cross-site' }, good, 'cross_site'],
    ['a sibling site', { host, 'sec-fetch-site': 'same-site' }, good, 'cross_site'],
    ['another origin', { host, origin: 'http://attacker.example' }, good, 'cross_origin'],
    ['another port', { host, origin: 'http://127.0.0.1:8080' }, good, 'cross_origin'],
    ['an opaque origin', { host, origin: 'null' }, good, 'cross_origin'],
    ['no token', { host }, undefined, 'csrf_missing'],
    ['an empty token', { host }, '', 'csrf_missing'],
    ["another user's token", { host }, access.csrfToken('bob'), 'csrf_wrong'],
    ["another process's token", { host }, new ConsoleAccess().csrfToken('alice'), 'csrf_wrong'],
  ])('%s', (_name, headers, token, refusal) => {
    const decided = access.checkForm(headers, 'alice', token);
    expect(decided.ok ? undefined : decided.reason).toBe(refusal);
  });
});

describe('ConsoleAccess.checkForm behind a reverse proxy (server.console.public_url)', () => {
  // nginx's proxy_pass sends the upstream's address as Host unless told otherwise.
  const host = '127.0.0.1:9464';
  const publicUrl = 'https://watchdog.example.com/';
  const good = access.csrfToken('alice');
  it.each<[string, string, string | undefined]>([
    ['the public origin', 'https://watchdog.example.com', undefined],
    ['the public origin with its default port', 'https://watchdog.example.com:443', undefined],
    ['the public host over plain http', 'http://watchdog.example.com', 'cross_origin'],
    ['another origin', 'https://attacker.example', 'cross_origin'],
    ['a name that starts as the public one', 'https://watchdog.example.com.attacker.example', 'cross_origin'],
  ])('%s', (_name, origin, refusal) => {
    const headers = { host, origin, 'sec-fetch-site': 'same-origin' };
    const decided = access.checkForm(headers, 'alice', good, publicUrl);
    expect(decided.ok ? undefined : decided.reason).toBe(refusal);
  });
});

describe('where the console is served', () => {
  const open: ConsoleConfig = { enabled: 'auto', allow: { remediate: 'anyone' }, max_silence: 1 };
  it.each<[string, string | null, ConsoleConfig, string | undefined]>([
    ['loopback, no auth', '127.0.0.1:9464', open, undefined],
    ['localhost, no auth', 'localhost:9464', open, undefined],
    ['[::1], no auth', '[::1]:9464', open, undefined],
    ['all interfaces, no auth', ':9464', open, 'needs_auth'],
    ['0.0.0.0, no auth', '0.0.0.0:9464', open, 'needs_auth'],
    ['a LAN address, no auth', '192.168.1.10:9464', open, 'needs_auth'],
    ['0.0.0.0 with a token', '0.0.0.0:9464', { ...open, auth: tokenAuth }, undefined],
    ['switched off', '127.0.0.1:9464', { ...open, enabled: false }, 'disabled'],
    ['no listener', null, open, 'listener_off'],
  ])('%s', (_name, listen, config, refusal) => {
    const serving = consoleServing(listen, config);
    expect(serving.serve ? undefined : serving.reason).toBe(refusal);
  });

  it.each([
    ['127.0.0.1:1', true],
    ['127.8.9.10:1', true],
    ['localhost:1', true],
    ['[::1]:1', true],
    ['[::ffff:127.0.0.1]:1', true],
    ['128.0.0.1:1', false],
    ['127.0.0.256:1', false],
    ['localhost.attacker.example:1', false],
    ['not an address', false],
  ])('%s is loopback: %s', (listen, loopback) => {
    expect(isLoopbackListen(listen)).toBe(loopback);
  });
});

describe('server.console in the config', () => {
  const MINIMAL = 'api: { base_url: https://dms.example.com, token: t }\n';
  const parse = (server: string, env: Record<string, string> = {}) =>
    parseConfig(`${MINIMAL}server: ${server}\n`, env, 'test.yaml');
  const problems = (server: string) => {
    try {
      parse(server);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
      throw err;
    }
    return [];
  };

  it.each([
    [
      'enabled: true on a wide listener without auth (the daemon refuses to start)',
      '{ listen: "0.0.0.0:9464", console: { enabled: true } }',
      'server.console.enabled: is true, but server.listen (0.0.0.0:9464) is not a loopback address',
    ],
    [
      'enabled: true without a listener',
      '{ listen: "off", console: { enabled: true } }',
      'server.console.enabled: is true, but server.listen is off',
    ],
    [
      'a short token',
      '{ console: { auth: { token: short } } }',
      'server.console.auth.token: must be at least 16 characters',
    ],
    [
      'a user without a password',
      '{ console: { auth: { user: ops } } }',
      'server.console.auth.password: is required with basic auth',
    ],
    [
      'a token and a user',
      `{ console: { auth: { token: ${TOKEN}, user: ops, password: ${PASSWORD} } } }`,
      'server.console.auth.token: give a token or a user and password, not both',
    ],
    ['an empty auth', '{ console: { auth: {} } }', 'server.console.auth: give a token, or a user and password'],
    [
      'a user with a colon',
      `{ console: { auth: { user: "a:b", password: ${PASSWORD} } } }`,
      'server.console.auth.user: must be',
    ],
    [
      'a max_silence under a minute',
      '{ console: { max_silence: 30s } }',
      'server.console.max_silence: must be at least 1m',
    ],
    ['an unknown key', '{ console: { enable: true } }', 'server.console'],
  ])('refuses %s', (_name, server, message) => {
    expect(problems(server).join('\n')).toContain(message);
  });

  it.each([
    ['auto on a wide listener without auth (pages say what to set)', '{ listen: "0.0.0.0:9464" }'],
    ['enabled: true on loopback', '{ console: { enabled: true } }'],
    [
      'enabled: true on a wide listener with a token',
      `{ listen: ":9464", console: { enabled: true, auth: { token: "\${T}" } } }`,
    ],
    ['off with no listener', '{ listen: "off", console: { enabled: false } }'],
  ])('takes %s', (_name, server) => {
    expect(() => parse(server, { T: TOKEN })).not.toThrow();
  });

  it('reads the auth secrets as Secrets that never show', () => {
    const config = parse(`{ console: { auth: { user: ops, password: "\${P}" } } }`, { P: PASSWORD });
    expect(config.server.console.auth?.password).toBeInstanceOf(Secret);
    expect(JSON.stringify(config)).not.toContain(PASSWORD);
  });
});
