/**
 * `withBodyBytes`: an answer's chunks joined in one buffer that every exchange reuses. Checked by
 * itself (sizes up, down and past the reused buffer's cap; a character of several bytes split
 * between chunks), and over HTTP: answers of different sizes arriving in many chunks at once, on
 * several connections, each read back whole and as sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { REUSED_BODY_BYTES, withBodyBytes } from '../../src/api/body-bytes.js';
import { startExchange } from '../../src/api/exchange.js';

/** `text` as UTF-8 cut into chunks of `size` bytes (so a character may straddle two). */
function chunksOf(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(Buffer.from(bytes.subarray(at, at + size)));
  return out;
}

/** A body of `n` characters: ASCII with a character of two and one of three bytes every 97. */
function bodyOf(n: number, seed: string): string {
  let out = '';
  for (let i = 0; out.length < n; i++) out += i % 97 === 0 ? 'é€' : `${seed}${i % 10}`;
  return out.slice(0, n);
}

describe('withBodyBytes', () => {
  it.each([
    ['one chunk (handed on as it is)', 1_000, 4_096],
    ['a page in 64 kB chunks', 480_000, 65_536],
    ['a smaller one after it (no bytes of the larger left over)', 20_000, 1_000],
    ['chunks of 7 bytes, characters split between them', 5_000, 7],
    ['a body past the reused buffer, joined on its own', REUSED_BODY_BYTES + 300_000, 65_536],
    ['a small one after that', 300, 100],
  ])('joins %s exactly', (_what, n, size) => {
    const text = bodyOf(n, String(n % 7));
    const chunks = chunksOf(text, size);
    const bytes = chunks.reduce((s, c) => s + c.length, 0);
    expect(withBodyBytes(chunks, bytes, (body) => [body.length, body.toString('utf8')])).toEqual([bytes, text]);
  });
});

let server: http.Server;
let origin: string;

beforeAll(async () => {
  // GET /<n>: a body of n characters written in pieces of 1,000 (a chunk each as it arrives).
  server = http.createServer((req, res) => {
    const n = Number(req.url!.slice(1));
    const text = bodyOf(n, String(n % 7));
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    let at = 0;
    const next = () => {
      if (at >= text.length) return res.end();
      res.write(text.slice(at, (at += 1_000)));
      setImmediate(next);
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('exchanges sharing the reused buffer', () => {
  it('reads answers arriving at once on several connections, each whole and as sent', async () => {
    const agent = new Agent({ connections: 6 });
    const sizes = [150_000, 3_000, 90_000, 400_000, 12_000, 250_000, 70_000, 1_500, 300_000, 45_000, 220_000, 8_000];
    const answers = await Promise.all(
      sizes.map(
        (n) =>
          startExchange(agent, {
            origin,
            path: `/${n}`,
            method: 'GET',
            headers: {},
            body: undefined,
            backstopMs: 30_000,
            maxBytes: 8 * 1024 * 1024,
          }).answer,
      ),
    );
    expect(answers.map((a) => a.body)).toEqual(sizes.map((n) => bodyOf(n, String(n % 7))));
    await agent.close();
  });
});
