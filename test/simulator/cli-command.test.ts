import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';

function io(signal: AbortSignal) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const value: CliIo = { stdout, stderr, env: {}, signal };
  return { io: value, out: () => out, err: () => err };
}

describe('deploy-watchdog simulator', () => {
  it('serves until the signal aborts, printing the base URL and token', async () => {
    const stop = new AbortController();
    const t = io(stop.signal);
    const exit = main(['simulator', '--port', '0', '--apps', '5', '--seed', '2', '--token', 'cli-test-token'], t.io);
    while (!t.out().includes('token:')) await new Promise((r) => setTimeout(r, 5));
    const baseUrl = /listening on (http:\/\/\S+)/.exec(t.out())![1]!;
    expect(t.out()).toContain('token: cli-test-token');
    const res = await fetch(`${baseUrl}/api/v1/whoami`, { headers: { authorization: 'Bearer cli-test-token' } });
    expect(res.status).toBe(200);
    stop.abort();
    expect(await exit).toBe(0);
    await expect(fetch(`${baseUrl}/api/v1/whoami`)).rejects.toThrow();
  });

  it('makes up a token when none is given', async () => {
    const stop = new AbortController();
    const t = io(stop.signal);
    const exit = main(['simulator', '--port', '0', '--apps', '1'], t.io);
    while (!t.out().includes('token:')) await new Promise((r) => setTimeout(r, 5));
    expect(t.out()).toMatch(/token: sim-[0-9a-f]{32}/);
    stop.abort();
    expect(await exit).toBe(0);
  });

  it.each([
    [['--apps', '0'], /--apps must be from 1 to 10000/],
    [['--apps', 'many'], /--apps must be an integer/],
    [['--port', '70000'], /--port must be from 0 to 65535/],
    [['--colour', 'red'], /Unknown option '--colour'/],
    [['--token', 'short'], /--token must be at least 8 characters/],
  ])('exits 2 with usage on %j', async (args, message) => {
    const t = io(new AbortController().signal);
    expect(await main(['simulator', ...args], t.io)).toBe(2);
    expect(t.err()).toMatch(message);
    expect(t.err()).toContain('usage: deploy-watchdog simulator');
  });
});
