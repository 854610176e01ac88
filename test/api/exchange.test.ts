/**
 * The client's transport (`startExchange`): the whole answer collected, and an early end that
 * takes effect at once, also for a request still queued behind a busy connection. Real HTTP on
 * loopback to a small server that can hold an answer back.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { startExchange, type ExchangeRequest } from '../../src/api/exchange.js';
import { LargeAnswerGate } from '../../src/api/large-answer-gate.js';

let server: http.Server;
let origin: string;
/** Sockets of requests to /hang, answered never (closed at the end). */
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/hang') {
      held.push(res);
      return;
    }
    if (req.url === '/endless') {
      // A body that never ends: 64 KiB every millisecond until the client goes away.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":"');
      const chunk = 'x'.repeat(64 * 1024);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/announced') {
      // Says its size up front and sends none of it.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) });
      res.flushHeaders();
      held.push(res);
      return;
    }
    if (req.url === '/big') {
      // 3 MiB of valid JSON, in 64 KiB writes.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":"');
      const piece = 'y'.repeat(64 * 1024);
      for (let i = 0; i < 48; i++) res.write(piece);
      res.end('"}');
      return;
    }
    if (req.url === '/replayed') {
      res.writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      res.end('{"data":{}}');
      return;
    }
    if (req.url === '/chunks') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.write('{"error":{"code":"rate_limited",');
      setTimeout(() => res.end('"message":"slow down"}}'), 10);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"data":{"path":"${req.url}","method":"${req.method}"}}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string): ExchangeRequest => ({
  origin,
  path,
  method: 'GET',
  headers: { accept: 'application/json' },
  body: undefined,
  backstopMs: 10_000,
  maxBytes: 1024 * 1024,
});

describe('startExchange', () => {
  it('collects an answer that arrives in several chunks, with its status and Retry-After', async () => {
    const agent = new Agent();
    const answer = await startExchange(agent, get('/chunks')).answer;
    expect(answer).toEqual({
      status: 429,
      retryAfter: '7',
      replayed: undefined,
      body: '{"error":{"code":"rate_limited","message":"slow down"}}',
      bytes: 55,
    });
    await agent.close();
  });

  it('ends a request queued behind a busy connection at once, and the connection is usable after', async () => {
    const agent = new Agent({ connections: 1 });
    const hanging = startExchange(agent, get('/hang'));
    const queued = startExchange(agent, get('/queued'));
    const reason = new Error('ended: timeout');
    queued.abort(reason);
    await expect(queued.answer).rejects.toBe(reason);
    // The hanging one holds the only connection until it too is ended; then the next one goes through.
    hanging.abort(new Error('ended: aborted'));
    await expect(hanging.answer).rejects.toThrow('ended: aborted');
    const next = await startExchange(agent, get('/next')).answer;
    expect(JSON.parse(next.body)).toEqual({ data: { path: '/next', method: 'GET' } });
    await agent.close();
  });

  it('rejects (never throws) when the dispatcher is already closed', async () => {
    const agent = new Agent();
    await agent.close();
    const exchange = startExchange(agent, get('/late'));
    await expect(exchange.answer).rejects.toThrow(/destroyed|closed/i);
  });

  it('sends a POST body', async () => {
    const agent = new Agent();
    const answer = await startExchange(agent, {
      ...get('/change'),
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    }).answer;
    expect(JSON.parse(answer.body)).toEqual({ data: { path: '/change', method: 'POST' } });
    await agent.close();
  });

  it.each([
    ['an endless body, once it passes the cap', '/endless'],
    ['a body whose announced length is past the cap, before reading it', '/announced'],
  ])('ends %s with AnswerTooLarge, and the agent goes on', async (_what, path) => {
    const agent = new Agent();
    await expect(startExchange(agent, get(path)).answer).rejects.toMatchObject({
      name: 'AnswerTooLarge',
      maxBytes: 1024 * 1024,
      status: 200,
    });
    const next = await startExchange(agent, get('/next')).answer;
    expect(next.status).toBe(200);
    await agent.close();
  });

  it('reports the Idempotent-Replayed header', async () => {
    const agent = new Agent();
    expect((await startExchange(agent, get('/replayed')).answer).replayed).toBe('true');
    await agent.close();
  });

  it('reads one large answer at a time through the gate: the second waits until the first is released', async () => {
    const agent = new Agent();
    const largeAnswers = new LargeAnswerGate();
    const both = [0, 1].map(() => startExchange(agent, { ...get('/big'), maxBytes: 8 * 1024 * 1024, largeAnswers }));
    const settled = [false, false];
    both.forEach((e, i) => void e.answer.then(() => (settled[i] = true)));
    // Whichever crossed its first MiB first holds the gate and finishes; the other is paused.
    const first = await Promise.race(both.map((e, i) => e.answer.then((a) => ({ a, i }))));
    expect(first.a.bytes).toBe(48 * 64 * 1024 + 11);
    await new Promise((r) => setTimeout(r, 100));
    expect(settled[1 - first.i]).toBe(false);
    both[first.i]!.release();
    expect((await both[1 - first.i]!.answer).bytes).toBe(first.a.bytes);
    both[1 - first.i]!.release();
    // A small answer never meets the gate, even while a large one holds it.
    const holder = startExchange(agent, { ...get('/big'), maxBytes: 8 * 1024 * 1024, largeAnswers });
    await holder.answer;
    expect((await startExchange(agent, { ...get('/small'), largeAnswers }).answer).status).toBe(200);
    holder.release();
    await agent.close();
  });
});

describe('LargeAnswerGate', () => {
  it('lets one owner through, queues the others in order, and passes on when the holder leaves (or a queued one gives up)', () => {
    const gate = new LargeAnswerGate();
    const [a, b, c] = [{}, {}, {}];
    const went: string[] = [];
    expect(gate.enter(a, () => went.push('a'))).toBe(true);
    expect(gate.enter(a, () => went.push('a again'))).toBe(true);
    expect(gate.enter(b, () => went.push('b'))).toBe(false);
    expect(gate.enter(c, () => went.push('c'))).toBe(false);
    gate.leave(b); // b gave up while queued (aborted): it is not woken later
    gate.leave(a);
    expect(went).toEqual(['c']);
    expect(gate.enter(b, () => went.push('b'))).toBe(false);
    gate.leave(c);
    gate.leave(c); // idempotent
    expect(went).toEqual(['c', 'b']);
  });
});
