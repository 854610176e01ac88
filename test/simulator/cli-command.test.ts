import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-harness.js';

describe('deploy-watchdog simulator', () => {
  it('serves until the signal aborts, printing the base URL and token', async () => {
    const stop = new AbortController();
    let out = '';
    const exit = runCli(['simulator', '--port', '0', '--apps', '5', '--seed', '2', '--token', 'cli-test-token'], { signal: stop.signal, onOutput: (s) => (out = s) });
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
    const exit = runCli(['simulator', '--port', '0', '--apps', '1'], { signal: stop.signal, onOutput: (s) => (out = s) });
    while (!out.includes('token:')) await new Promise((r) => setTimeout(r, 5));
    expect(out).toMatch(/token: sim-[0-9a-f]{32}/);
    stop.abort();
    expect((await exit).code).toBe(0);
  });

  it.each([
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
});
