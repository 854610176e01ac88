import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { Channel, SendResult } from '../../../src/notify/channels/channel.js';
import { slackChannel } from '../../../src/notify/channels/slack.js';
import type { SlackMessage } from '../../../src/notify/channels/slack-render.js';
import { slackConfigSchema } from '../../../src/notify/channels/slack-config.js';
import { startWebhookReceiver, type WebhookMode, type WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

describe('slack channel against a local webhook receiver', () => {
  let receiver: WebhookReceiver;
  let channel: Channel<SlackMessage>;
  const { logger, lines } = captureLogger();
  const results: SendResult[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver({ retryAfterSeconds: 7 });
    const config = slackConfigSchema.parse({
      name: 'ops-slack',
      type: 'slack',
      webhook_url: receiver.url,
      username: 'watchdog',
      // Short, so the "hang" case ends soon, yet over a second, so a loaded machine never makes an
      // answered request time out; no assertion depends on how long it took.
      timeout: 2000,
    });
    channel = slackChannel.create(config, { logger, clock: new ManualClock() });
  });

  afterEach(() => receiver.setMode('ok'));

  afterAll(async () => {
    await channel.close?.();
    await receiver.close();
    // The webhook URL is the credential: no result and no log line may contain it, or its path.
    const secretPath = new URL(receiver.url).pathname;
    for (const text of [...results.map((r) => JSON.stringify(r)), ...lines]) {
      expect(text).not.toContain(receiver.url);
      expect(text).not.toContain(secretPath);
      expect(text).not.toContain(secretPath.split('/').at(-1));
    }
    expect(results.length).toBeGreaterThan(0);
    expect(lines.length).toBeGreaterThan(0);
  });

  async function send(): Promise<SendResult> {
    const result = await channel.send(channel.render(alerts([alertEvent()])));
    results.push(result);
    return result;
  }

  it('delivers the rendered message', async () => {
    const before = receiver.received.length;
    expect(await send()).toEqual({ outcome: 'ok' });
    const payload = receiver.received[before];
    expect(payload?.username).toBe('watchdog');
    // None of the library's own options in the body.
    expect(payload).not.toHaveProperty('timeout');
    expect(payload).not.toHaveProperty('agent');
    // Slack's crawler is never sent to a link from the service (as the Slack app's posts).
    expect(payload).toMatchObject({ unfurl_links: false, unfurl_media: false });
    expect(payload?.text).toContain('🔴 CRITICAL · 1 failed run · shop · production');
    expect(payload?.blocks?.[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '🔴 CRITICAL · 1 failed run · shop · production', emoji: true },
    });
  });

  it('delivers a message at the limits (the receiver refuses what Slack would)', async () => {
    const long = 'z'.repeat(4000);
    const events = Array.from({ length: 30 }, (_, i) =>
      alertEvent({
        id: i,
        summary: long,
        labels: { check: 'failed_runs', app: long, environment_type: long },
        details: { reason: long },
      }),
    );
    const result = await channel.send(
      channel.render({ type: 'alerts', group: { environment_type: long }, events, omitted: 3 }),
    );
    results.push(result);
    expect(result).toEqual({ outcome: 'ok' });
  });

  it.each<[WebhookMode, SendResult]>([
    ['fail500', { outcome: 'retryable', reason: 'server error (HTTP 500): internal_error' }],
    ['rateLimit', { outcome: 'retryable', reason: 'rate limited (HTTP 429): rate_limited', retryAfterMs: 7000 }],
    ['notFound', { outcome: 'permanent', reason: 'rejected (HTTP 404): no_service', wholeChannel: true }],
    ['hang', { outcome: 'retryable', reason: 'timed out after 2000 ms' }],
  ])('mode %s → %j', async (mode, expected) => {
    receiver.setMode(mode);
    const before = receiver.requests;
    expect(await send()).toEqual(expected);
    // Exactly one request: the library's own retries are off; retrying is the outbox's job.
    expect(receiver.requests).toBe(before + 1);
  });

  it('scrubs the webhook path from an answer that echoes it before the reason cuts it', async () => {
    receiver.setMode('echoPath');
    const result = await send();
    const secret = new URL(receiver.url).pathname.split('/').at(-1)!;
    expect(result).toMatchObject({
      outcome: 'permanent',
      reason: expect.stringMatching(/^rejected \(HTTP 400\): invalid_payload/),
    });
    // Not even its first half: cut first, the scrub would no longer have found it whole.
    expect(JSON.stringify(result)).not.toContain(secret.slice(0, 8));
  });

  it('answers retryable, without waiting, when the signal aborts a hanging send', async () => {
    receiver.setMode('hang');
    const controller = new AbortController();
    const pending = channel.send(channel.render(alerts([alertEvent()])), controller.signal);
    controller.abort(new Error('stopping'));
    const result = await pending;
    results.push(result);
    expect(result).toEqual({ outcome: 'retryable', reason: 'aborted before Slack answered' });
  });

  it('answers retryable when nothing listens (connection refused)', async () => {
    const gone = await startWebhookReceiver();
    await gone.close();
    const config = slackConfigSchema.parse({ name: 'gone', type: 'slack', webhook_url: gone.url, timeout: 1000 });
    const c = slackChannel.create(config, { logger, clock: new ManualClock() });
    const result = await c.send(c.render(alerts([alertEvent()])));
    await c.close?.();
    expect(result).toEqual({ outcome: 'retryable', reason: 'network error (ECONNREFUSED)' });
    for (const text of [JSON.stringify(result), ...lines]) expect(text).not.toContain(new URL(gone.url).pathname);
  });

  it('logs failures without the URL', () => {
    const failures = lines.filter((l) => l.includes('delivery failed') && l.includes('"kind":"slack"'));
    expect(failures.length).toBeGreaterThan(0);
    for (const l of failures) expect(JSON.parse(l)).toMatchObject({ channel: expect.any(String), kind: 'slack' });
  });
});
