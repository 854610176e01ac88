import { describe, expect, it } from 'vitest';
import { runCli } from '../../../test/helpers/cli-harness.js';

describe('deploy-watchdog simulator', () => {
  it('serves until the signal aborts, printing the base URL and token', async () => {
    const stop = new AbortController();
    let out = '';
    const exit = runCli(['simulator', '--port', '0', '--apps', '5', '--seed', '2', '--token', 'cli-test-token'], {
      signal: stop.signal,
      onOutput: (s) => (out = s),
    });
    while (!out.includes('token:')) await new Promise((r) => setTimeout(r, 5));
    const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    expect(out).toContain('token: cli-test-token');
    const res = await fetch(`${baseUrl}/api/v1/whoami`, { headers: { authorization: 'Bearer cli-test-token' } });
    expect(res.status).toBe(200);
    stop.abort();
    expect((await exit).code).toBe(0);
    await expect(fetch(`${baseUrl}/api/v1/whoami`)).rejects.toThrow();
  });

  it('makes up a token when none is given', async () => {
    const stop = new AbortController();
    let out = '';
    const exit = runCli(['simulator', '--port', '0', '--apps', '1'], {
      signal: stop.signal,
      onOutput: (s) => (out = s),
    });
    while (!out.includes('token:')) await new Promise((r) => setTimeout(r, 5));
    expect(out).toMatch(/token: sim-[0-9a-f]{32}/);
    stop.abort();
    expect((await exit).code).toBe(0);
  });

  it('serves in the modes its flags choose, and says which', async () => {
    const stop = new AbortController();
    let out = '';
    const exit = runCli(
      [
        'simulator',
        '--port',
        '0',
        '--apps',
        '8',
        '--token',
        'cli-test-token',
        '--max-limit',
        '5',
        '--time-format',
        'offset',
        '--state-words',
        'alt',
        '--rate-limit',
        '0.01',
        '--rate-burst',
        '12',
        '--retry-after',
        'date',
        '--scoped-token',
        'dev-reader:read=development:change=none',
        '--fault',
        'runs.get=echoToken',
        '--fault',
        'runs.get=latency:1',
        '--fault',
        'servers.list=huge:1',
        '--fault',
        '*=endlessList',
      ],
      { signal: stop.signal, onOutput: (s) => (out = s) },
    );
    while (!out.includes('token:')) await new Promise((r) => setTimeout(r, 5));
    const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    const get = async (path: string, token = 'cli-test-token') => {
      const res = await fetch(`${baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    expect(out).toContain('max limit: 5');
    expect(out).toContain('time format: offset');
    expect(out).toContain('state words: alt');
    expect(out).toContain('rate limit: 0.01/s per token, burst 12, Retry-After date');
    expect(out).toContain('scoped token dev-reader: reads development, changes none, namespaces all');
    expect(out).toContain('fault on runs.get: {"echoToken":true,"latencyMs":1}');

    expect(JSON.parse((await get('/apps?limit=6')).text).error.message).toContain('at most 5');
    const apps = JSON.parse((await get('/apps?limit=5', 'dev-reader')).text).data;
    expect(apps.total).toBe(1_000_000_000);
    expect(apps.items.every((a: { environment_type: string }) => a.environment_type === 'development')).toBe(true);
    expect(new Set(apps.items.map((a: { state: string }) => a.state))).toEqual(new Set(['active']));
    expect(apps.items[0].deployed_at).toMatch(/T\d\d:\d\d:\d\d(\.\d{3})?[+-]\d\d:\d\d$/);
    expect(JSON.parse((await get('/runs/1')).text).data.id).toBe('cli-test-token');
    expect((await get('/servers')).text.length).toBe(1_048_576);
    // The admin token has made 3 requests; 9 more spend its burst of 12 (nothing refills at 0.01/s).
    for (let i = 0; i < 9; i += 1) expect((await get('/whoami')).status).toBe(200);
    const limited = await get('/whoami');
    expect(limited.status).toBe(429);
    expect(Date.parse(limited.headers.get('retry-after') ?? '')).toBeGreaterThan(Date.now());
    stop.abort();
    expect((await exit).code).toBe(0);
  });

  it.each([
    [['--max-limit', '0'], /--max-limit must be from 1 to 1000000/],
    [['--state-words', 'klingon'], /--state-words must be one of default, alt, got "klingon"/],
    [
      ['--time-format', 'rfc2822'],
      /--time-format must be one of iso, iso-ms, offset, space, mixed, zoneless, got "rfc2822"/,
    ],
    [['--rate-limit', 'fast'], /--rate-limit must be a number of requests per second above 0, got "fast"/],
    [['--rate-limit', '0'], /--rate-limit must be a number of requests per second above 0/],
    [['--rate-limit', '5', '--rate-burst', '0'], /--rate-burst must be from 1 to 1000000/],
    [['--rate-limit', '5', '--retry-after', 'never'], /--retry-after must be one of seconds, date, none, got "never"/],
    [['--rate-burst', '3'], /--rate-burst needs --rate-limit/],
    [['--retry-after', 'none'], /--retry-after needs --rate-limit/],
    [['--scoped-token', 'short:read=staging'], /--scoped-token: the token must be at least 8 characters/],
    [
      ['--scoped-token', 'ops-token:read=prod'],
      /--scoped-token: read= takes production, staging, development \(comma-separated\) or none, got "prod"/,
    ],
    [
      ['--scoped-token', 'ops-token:write=staging'],
      /--scoped-token: "write=staging" is not read=ENVS, get=ENVS, change=ENVS or namespaces=CODES/,
    ],
    [['--scoped-token', 'ops-token:read=staging:read=development'], /--scoped-token: read= is given twice/],
    [
      ['--scoped-token', 'ops-token', '--scoped-token', 'ops-token'],
      /--scoped-token: the token "ops-token" is given twice/,
    ],
    [
      ['--scoped-token', 'ops-token:namespaces=atlantis'],
      /--scoped-token: no namespace "atlantis" in this seed; its namespaces are /,
    ],
    [['--fault', 'apps.list'], /--fault must be FUNCTION=KIND\[:ARG\], got "apps.list"/],
    [
      ['--fault', 'apps.lost=hang'],
      /--fault: "apps.lost" is not a function; give a dotted name such as apps.list, or \*/,
    ],
    [['--fault', 'apps.list=explode'], /--fault: unknown kind "explode"; kinds: error, latency, hang/],
    [['--fault', 'apps.list=error:oops'], /--fault: "oops" is not an error code of the API/],
    [['--fault', 'apps.list=huge'], /--fault: huge needs :MB/],
    [['--fault', 'apps.list=huge:lots'], /--fault huge must be an integer, got "lots"/],
    [['--fault', 'apps.list=endless:5'], /--fault: endless takes no argument/],
    [['--fault', 'apps.list=rateLimit:soon'], /--fault rateLimit must be one of seconds, date, none/],
    [['--apps', '0'], /--apps must be from 1 to 10000/],
    [['--apps', 'many'], /--apps must be an integer/],
    [['--port', '70000'], /--port must be from 0 to 65535/],
    [['--colour', 'red'], /Unknown option '--colour'/],
    [['--token', 'short'], /--token must be at least 8 characters/],
  ])('exits 2 with usage on %j', async (args, message) => {
    const { code, stderr } = await runCli(['simulator', ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).toContain('usage: deploy-watchdog simulator');
  });

  it('documents every mode in its usage', async () => {
    const { stdout, stderr } = await runCli(['simulator', '--help']);
    const help = stdout + stderr;
    for (const word of [
      '--max-limit',
      '--time-format',
      'iso-ms',
      'offset',
      'space',
      'mixed',
      'zoneless',
      '--rate-limit',
      '--rate-burst',
      '--retry-after',
      '--scoped-token',
      '--fault',
      'huge:MB',
      'endless',
      'echoToken',
      'endlessList',
      'totalOff:N',
      'unreadableTime',
      'oddValue',
      'inventedErrorCodes',
      '--state-words',
    ]) {
      expect(help).toContain(word);
    }
  });
});
