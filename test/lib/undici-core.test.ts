import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, fetch, request } from '../../src/lib/undici-core.js';
import { modulesLoadedBy } from '../helpers/loaded-modules.js';

let server: http.Server;
let base: string;
const seen: { method: string; url: string; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true, path: req.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('undici-core: the parts of undici the daemon uses, without its index', () => {
  it('sends a request through an Agent of its own, with the path, the query, the method and the body', async () => {
    const agent = new Agent({ connect: { timeout: 5_000 } });
    try {
      const res = await request(`${base}/hooks/one?x=1&y=%20`, {
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
        dispatcher: agent,
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ ok: true, path: '/hooks/one?x=1&y=%20' });
      expect(seen.at(-1)).toEqual({ method: 'POST', url: '/hooks/one?x=1&y=%20', body: '{"a":1}' });
    } finally {
      await agent.close();
    }
  });

  it('sends through undici’s global agent when none is given, as a GET', async () => {
    const res = await request(new URL(`${base}/ping`));
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/ping' });
  });

  it('fetches through the whole package, loaded on first use, with an Agent of ours as its dispatcher', async () => {
    const agent = new Agent();
    try {
      const res = await fetch(`${base}/api/chat.postMessage`, {
        method: 'POST',
        body: 'x',
        dispatcher: agent,
      } as Parameters<typeof fetch>[1]);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, path: '/api/chat.postMessage' });
    } finally {
      await agent.close();
    }
  });

  it('does not load undici’s index (every dispatcher, mock, cache and fetch) until fetch is called', () => {
    const loaded = modulesLoadedBy(new URL('../../src/lib/undici-core.ts', import.meta.url));
    expect(loaded.filter((f) => f.includes('undici')).length).toBeGreaterThan(0);
    expect(loaded.filter((f) => /undici[\\/]index\.js$/.test(f))).toEqual([]);
  });
});
