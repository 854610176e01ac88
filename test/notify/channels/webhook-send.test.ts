import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { Channel, SendResult } from '../../../src/notify/channels/channel.js';
import { webhookChannel, type AlertmanagerMessage } from '../../../src/notify/channels/webhook.js';
import { webhookConfigSchema } from '../../../src/notify/channels/webhook-config.js';
import { startAlertmanagerReceiver, type AlertmanagerReceiver, type ReceiverAnswer } from '../alertmanager-receiver.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

/** The places among `texts` (by index) where any of `secrets` shows; named, so a failure prints no secret. */
function leaks(texts: readonly string[], secrets: readonly string[]): string[] {
  return texts.flatMap((t, i) => secrets.filter((s) => t.includes(s)).map((_, j) => `text ${i}, secret ${j}`));
}

describe('webhook channel against a receiver built for Alertmanager', () => {
  let receiver: AlertmanagerReceiver;
  const token = `tok-${randomBytes(8).toString('hex')}`;
  const apiKey = `key-${randomBytes(8).toString('hex')}`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const { logger, lines } = captureLogger();
  const results: SendResult[] = [];
  const opened: Channel<AlertmanagerMessage>[] = [];

  function channel(over: Record<string, unknown> = {}, url = receiver.url): Channel<AlertmanagerMessage> {
    const config = webhookConfigSchema.parse({
      name: 'oncall',
      type: 'webhook',
      url,
      bearer_token: token,
      headers: { 'X-Api-Key': apiKey },
      // Short, so the "hang" case ends soon, yet over a second, so a loaded machine never makes an
      // answered request time out; no assertion depends on how long it took.
      timeout: 2000,
      ...over,
    });
    const c = webhookChannel.create(config, { logger, clock: new ManualClock() });
    opened.push(c);
    return c;
  }

  async function send(c = channel()): Promise<SendResult> {
    const result = await c.send(c.render(alerts([alertEvent()])));
    results.push(result);
    return result;
  }

  beforeAll(async () => {
    receiver = await startAlertmanagerReceiver();
  });

  afterEach(() => receiver.answer('ok'));

  afterAll(async () => {
    for (const c of opened) await c.close?.();
    await receiver.close();
    // The URL (its tokens), the bearer token, the header's value, the password: in no result, no log line.
    const secrets = [...receiver.secrets, token, apiKey, password, Buffer.from(`u:${password}`).toString('base64')];
    expect(leaks([...results.map((r) => JSON.stringify(r)), ...lines], secrets)).toEqual([]);
    expect(results.length).toBeGreaterThan(0);
    expect(lines.length).toBeGreaterThan(0);
  });

  it('posts a payload the receiver takes as Alertmanager v4, with its headers and token', async () => {
    const before = receiver.received.length;
    expect(await send()).toEqual({ outcome: 'ok' });
    expect(receiver.invalid).toEqual([]);
    const got = receiver.received[before];
    expect(got?.payload).toMatchObject({ version: '4', receiver: 'oncall', status: 'firing' });
    expect(got?.headers).toMatchObject({
      authorization: `Bearer ${token}`,
      'x-api-key': apiKey,
      'content-type': 'application/json',
      'user-agent': 'deploy-watchdog',
    });
  });

  it('sends basic auth as RFC 7617 says', async () => {
    const before = receiver.received.length;
    const c = channel({ bearer_token: undefined, basic_auth: { username: 'u', password } });
    expect(await send(c)).toEqual({ outcome: 'ok' });
    const expected = `Basic ${Buffer.from(`u:${password}`).toString('base64')}`;
    expect(receiver.received[before]?.headers.authorization).toBe(expected);
  });

  it.each<[string, ReceiverAnswer, SendResult]>([
    [
      '503 with Retry-After',
      { status: 503, headers: { 'retry-after': '120' }, body: 'maintenance' },
      { outcome: 'retryable', reason: 'server error (HTTP 503): maintenance', retryAfterMs: 120_000 },
    ],
    ['500', { status: 500, body: 'boom' }, { outcome: 'retryable', reason: 'server error (HTTP 500): boom' }],
    [
      '429 with Retry-After',
      { status: 429, headers: { 'retry-after': '7' } },
      { outcome: 'retryable', reason: 'rate limited (HTTP 429)', retryAfterMs: 7000 },
    ],
    [
      '400 with a reason',
      { status: 400, body: 'unknown receiver "oncall"\n' },
      { outcome: 'permanent', reason: 'rejected (HTTP 400): unknown receiver "oncall"' },
    ],
    [
      '401',
      { status: 401, body: 'bad token' },
      { outcome: 'permanent', reason: 'rejected (HTTP 401): bad token', wholeChannel: true },
    ],
    ['410', { status: 410 }, { outcome: 'permanent', reason: 'rejected (HTTP 410)', wholeChannel: true }],
    [
      '308 to HTTPS',
      { status: 308, headers: { location: 'https://hooks.example.com:8443/alert/s3cret-path?token=t' } },
      {
        outcome: 'permanent',
        reason:
          "redirected (HTTP 308) to https://hooks.example.com:8443: set the channel's URL to where the receiver is now",
        wholeChannel: true,
      },
    ],
    [
      '302 within the receiver',
      { status: 302, headers: { location: '/login' } },
      {
        outcome: 'permanent',
        reason: "redirected (HTTP 302): set the channel's URL to where the receiver is now",
        wholeChannel: true,
      },
    ],
    ['no answer', 'hang', { outcome: 'retryable', reason: 'timed out after 2000 ms' }],
  ])('%s → %j', async (_name, answer, expected) => {
    receiver.answer(answer);
    const before = receiver.requests;
    expect(await send()).toEqual(expected);
    // Exactly one request: retrying is the outbox's job.
    expect(receiver.requests).toBe(before + 1);
  });

  it('keeps the URL and the token out of a reason when the receiver echoes them', async () => {
    receiver.answer({ status: 400, body: `no hook at ${receiver.url} for Bearer ${token}` });
    const result = await send();
    expect(result).toEqual({
      outcome: 'permanent',
      reason: 'rejected (HTTP 400): no hook at <secret> for Bearer <secret>',
    });
  });

  it.each([
    // Laravel's 404: the path without its leading slash, in JSON from PHP, which writes `/` as `\/`.
    [
      'its path, as Laravel says it',
      () => `The route ${new URL(receiver.url).pathname.slice(1).replaceAll('/', '\\/')}`,
    ],
    ['its query token alone', () => `invalid key ${new URL(receiver.url).searchParams.get('key')}`],
  ])('keeps the URL out of a reason when the receiver echoes %s', async (_name, echoed) => {
    receiver.answer({ status: 404, body: `{"message":"${echoed()} could not be found."}` });
    const result = await send();
    expect(result.outcome).toBe('permanent');
    expect(leaks([JSON.stringify(result)], receiver.secrets)).toEqual([]);
  });

  it('keeps a token holding a slash out of a reason when the receiver echoes it JSON-escaped', async () => {
    const slashed = `tok/${randomBytes(12).toString('hex')}`;
    receiver.answer({ status: 401, body: `{"error":"bad token ${slashed.replaceAll('/', '\\/')}"}` });
    const result = await send(channel({ bearer_token: slashed }));
    expect(result.outcome).toBe('permanent');
    expect(leaks([JSON.stringify(result)], [slashed.split('/')[1]!])).toEqual([]);
  });

  it('reads no more of a long answer than its reason needs', async () => {
    receiver.answer({ status: 400, body: 'x'.repeat(5_000_000) });
    const result = await send();
    expect(result.outcome === 'permanent' && result.reason.length).toBeLessThan(200);
  });

  it('answers retryable, without waiting, when the signal aborts a hanging send', async () => {
    receiver.answer('hang');
    const c = channel({ timeout: 60_000 });
    const controller = new AbortController();
    const pending = c.send(c.render(alerts([alertEvent()])), controller.signal);
    controller.abort(new Error('stopping'));
    const result = await pending;
    results.push(result);
    expect(result).toEqual({ outcome: 'retryable', reason: 'aborted before the webhook answered' });
  });

  it('answers retryable when nothing listens (connection refused)', async () => {
    const gone = await startAlertmanagerReceiver();
    await gone.close();
    const result = await send(channel({}, gone.url));
    expect(result).toEqual({ outcome: 'retryable', reason: 'network error (ECONNREFUSED)' });
    expect(leaks([JSON.stringify(result), ...lines], gone.secrets)).toEqual([]);
  });

  it('logs failures with its channel and kind, without the URL', () => {
    const failures = lines.filter((l) => l.includes('delivery failed') && l.includes('"kind":"webhook"'));
    expect(failures.length).toBeGreaterThan(0);
    for (const l of failures) expect(JSON.parse(l)).toMatchObject({ channel: 'oncall', kind: 'webhook' });
  });
});
