import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { httpInteractionsHandler } from '../../src/interactions/slack-http-receiver.js';
import { slackSignature } from '../../src/interactions/slack-signature.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { LogCapture } from '../notify/notify-fixture.js';

const SECRET = 'receiver-SECRET-signing-secret-01';
let server: Server | undefined;

afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function receiver() {
  const clock = new ManualClock();
  const log = new LogCapture();
  const payloads: unknown[] = [];
  const handler = httpInteractionsHandler({
    secrets: () => [new Secret(SECRET)],
    onPayload: (p) => payloads.push(p),
    clock,
    log: log.logger,
  });
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/interactions`;
  const post = async (body: string, headers: Record<string, string> = {}) => {
    const timestamp = String(Math.floor(clock.now() / 1000));
    const res = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': slackSignature(SECRET, timestamp, body),
        ...headers,
      },
      body,
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  return { url, post, payloads, log, clock };
}

describe('POST /slack/interactions', () => {
  it('answers a signed click 200 with an empty body at once, and hands its payload on', async () => {
    const r = await receiver();
    const payload = { type: 'block_actions', user: { id: 'U0ALICE' } };
    expect(await r.post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString())).toEqual({
      status: 200,
      text: '',
    });
    expect(r.payloads).toEqual([payload]);
  });

  it.each([
    ['unsigned', { 'x-slack-signature': '' }, 401],
    ['a signature of another body', { 'x-slack-signature': slackSignature(SECRET, '0', 'x') }, 401],
  ])('refuses a request %s with 401 and a log line, handing nothing on', async (_what, headers, status) => {
    const r = await receiver();
    const result = await r.post(`payload=${encodeURIComponent('{"type":"block_actions"}')}`, headers);
    expect(result.status).toBe(status);
    expect(r.payloads).toEqual([]);
    expect(r.log.text()).toContain('Slack interaction refused');
    expect(r.log.text()).not.toContain('SECRET');
  });

  it('refuses the same signed request a second time within the window (a replay), 401', async () => {
    const r = await receiver();
    const body = new URLSearchParams({ payload: JSON.stringify({ type: 'block_actions', n: 1 }) }).toString();
    const timestamp = String(Math.floor(r.clock.now() / 1000));
    const headers = {
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': slackSignature(SECRET, timestamp, body),
    };
    expect((await r.post(body, headers)).status).toBe(200);
    r.clock.advance(4 * 60_000);
    expect(await r.post(body, headers)).toEqual({ status: 401, text: JSON.stringify({ error: 'replayed' }) });
    expect(r.payloads).toHaveLength(1);
    expect(r.log.text()).toContain('a replay');
    // Another click (another body, so another signature) in the same second is taken.
    expect((await r.post(body.replace('1', '2'))).status).toBe(200);
    expect(r.payloads).toHaveLength(2);
  });

  it("refuses the same body signed again later (Slack's retry, X-Slack-Retry-Num), 401: one click acted on once", async () => {
    const r = await receiver();
    const body = new URLSearchParams({
      payload: JSON.stringify({ type: 'block_actions', trigger_id: 't1' }),
    }).toString();
    expect((await r.post(body)).status).toBe(200);
    r.clock.advance(60_000);
    expect(await r.post(body, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' })).toEqual({
      status: 401,
      text: JSON.stringify({ error: 'replayed' }),
    });
    expect(r.payloads).toHaveLength(1);
  });

  it('refuses a signed body without a JSON payload (400), a body too large (413), and a GET (405)', async () => {
    const r = await receiver();
    expect((await r.post('payload=not-json')).status).toBe(400);
    expect((await r.post(`payload=${'x'.repeat(1024 * 1024 + 1)}`)).status).toBe(413);
    expect((await request(r.url)).statusCode).toBe(405);
    expect(r.payloads).toEqual([]);
  });
});
