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
      text: '{"error":{"code":"rate_limited","message":"slow down"}}',
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
    expect(JSON.parse(next.text)).toEqual({ data: { path: '/next', method: 'GET' } });
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
    expect(JSON.parse(answer.text)).toEqual({ data: { path: '/change', method: 'POST' } });
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
});
