import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { silentLogger } from '../../src/lib/logger.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { buildChannels, closeChannels } from '../../src/notify/build-channels.js';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { SEND_MARGIN_MS, sendLimitMs } from '../../src/notify/send-with-timeout.js';
import { Metrics } from '../../src/lib/metrics.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { finding, Harness, HOUR, MINUTE, SECOND, slackTo } from './notify-fixture.js';

let receiver: WebhookReceiver;
let other: WebhookReceiver;
let h: Harness | undefined;

beforeEach(async () => {
  receiver = await startWebhookReceiver({ retryAfterSeconds: 120 });
  other = await startWebhookReceiver();
});

afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver.close();
  await other.close();
});

const delivery = {
  max_age: 60 * MINUTE,
  initial_backoff: 10 * SECOND,
  max_backoff: 5 * MINUTE,
  timeout: 5 * SECOND,
  interval: 5 * SECOND,
};

async function counter(metrics: Metrics, channel: string, outcome: string): Promise<number> {
  const metric = await metrics.notifications.get();
  return metric.values.find((v) => v.labels.channel === channel && v.labels.outcome === outcome)?.value ?? 0;
}

describe('retries', () => {
  it('a webhook that refuses the channel itself (404) is asked once a round, not once per message', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery } });
    receiver.setMode('notFound');
    // Three checks: three messages due in one round.
    h.cycle('runs', [finding('shop'), finding('crm', { check: 'stuck_runs' }), finding('erp', { check: 'servers' })]);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, failed: 1, waiting: 3 });
    expect(receiver.requests).toBe(1);
    // Paused until max_backoff: the next rounds ask nothing; then one try again, for all of them.
    h.clock.advance(delivery.interval);
    await h.notifier.deliverDue();
    expect(receiver.requests).toBe(1);
    receiver.setMode('ok');
    h.clock.advance(delivery.max_backoff);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 3, waiting: 0 });
  });

  it('a receiver down for several rounds gets the message exactly once when it is back', async () => {
    const metrics = new Metrics({ processMetrics: false });
    h = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery }, metrics });
    receiver.setMode('fail500');
    h.cycle('runs', [finding('shop')]);

    // Backoff doubles: 10 s, 20 s, 40 s (random() = 1: no jitter taken off).
    for (const wait of [0, 10 * SECOND, 20 * SECOND, 40 * SECOND]) {
      h.clock.advance(wait);
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, retried: 1, waiting: 1 });
    }
    expect(receiver.requests).toBe(4);

    // Before the 80 s backoff is over, nothing is tried.
    h.clock.advance(79 * SECOND);
    await h.notifier.deliverDue();
    expect(receiver.requests).toBe(4);

    receiver.setMode('ok');
    h.clock.advance(SECOND);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    h.clock.advance(10 * MINUTE);
    await h.notifier.deliverDue();
    expect(receiver.received).toHaveLength(1);
    expect(h.rows()).toMatchObject([{ status: 'sent', attempts: 5 }]);
    expect(await counter(metrics, 'ops', 'retry')).toBe(4);
    expect(await counter(metrics, 'ops', 'sent')).toBe(1);
  });

  it('honours Slack 429 Retry-After: no send before it, for the whole channel', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery } });
    receiver.setMode('rateLimit');
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    expect(receiver.requests).toBe(1);

    // A new alert meanwhile waits with the paused channel, though its own backoff is zero.
    h.clock.advance(30 * SECOND);
    h.cycle('urls', [finding('crm', { check: 'url_checks' })]);
    await h.notifier.deliverDue();
    h.clock.advance(89 * SECOND);
    await h.notifier.deliverDue();
    expect(receiver.requests).toBe(1);

    receiver.setMode('ok');
    h.clock.advance(SECOND);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 2 });
    expect(receiver.requests).toBe(3);
  });

  it('a permanent 404 is logged, counted, kept and retried at max_backoff until max_age, then expired', async () => {
    const metrics = new Metrics({ processMetrics: false });
    h = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery }, metrics });
    receiver.setMode('notFound');
    h.cycle('runs', [finding('shop')]);
    expect(await h.notifier.deliverDue()).toMatchObject({ failed: 1, waiting: 1 });
    expect(h.rows()).toMatchObject([{ status: 'pending', attempts: 1, last_error: 'rejected (HTTP 404): no_service' }]);

    h.clock.advance(5 * MINUTE - SECOND);
    await h.notifier.deliverDue();
    expect(receiver.requests).toBe(1);
    h.clock.advance(SECOND);
    await h.notifier.deliverDue();
    expect(receiver.requests).toBe(2);

    for (let i = 0; i < 11; i++) {
      h.clock.advance(5 * MINUTE);
      await h.notifier.deliverDue();
    }
    expect(h.rows()).toMatchObject([{ status: 'expired', attempts: 12 }]);
    expect(await counter(metrics, 'ops', 'failed')).toBe(12);
    expect(await counter(metrics, 'ops', 'expired')).toBe(1);
    expect(h.log.text()).toContain('notification not delivered within max_age; given up');
    expect(h.log.text()).not.toContain(new URL(receiver.url).pathname);
    // Named by one `stage` key, not the notifier's and delivery's both.
    const givenUp = h.log.lines.find((line) => line.includes('given up')) ?? '';
    expect(givenUp.match(/"stage":/g)).toEqual(['"stage":']);
    expect(JSON.parse(givenUp)).toMatchObject({ stage: 'delivery', channel: 'ops' });
  });

  it('a permanently refused message is delivered once the channel is fixed, before max_age', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery } });
    receiver.setMode('notFound');
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    receiver.setMode('ok');
    h.clock.advance(5 * MINUTE);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  it('an SMTP temporary error (451) is retried, a permanent one (550) kept as failed', async () => {
    const sink: SmtpSink = await startSmtpSink();
    try {
      h = Harness.open({
        channels: [
          {
            name: 'mail',
            type: 'email',
            smtp: { host: sink.host, port: sink.port, secure: 'none', timeout: 5000 },
            from: 'dw@example.com',
            to: ['ops@example.com'],
          },
        ],
        notify: { delivery },
      });
      sink.setMode('tempfail-rcpt');
      h.cycle('runs', [finding('shop')]);
      expect(await h.notifier.deliverDue()).toMatchObject({ retried: 1 });
      sink.setMode('reject-data');
      h.clock.advance(10 * SECOND);
      expect(await h.notifier.deliverDue()).toMatchObject({ failed: 1 });
      sink.setMode('ok');
      h.clock.advance(5 * MINUTE);
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1 });
      expect(sink.messages).toHaveLength(1);
      expect(sink.messages[0]?.text).toContain('Problem shop');
    } finally {
      await h?.close();
      h = undefined;
      await sink.close();
    }
  });
});

describe('a slow relay', () => {
  it('taking longer than delivery.timeout, but within its own SMTP timeouts, is waited for: one message, one attempt', async () => {
    let arrived!: () => void;
    const inData = new Promise<void>((resolve) => (arrived = resolve));
    let accept!: () => void;
    const accepted = new Promise<void>((resolve) => (accept = resolve));
    let received = 0;
    const relay = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      authOptional: true,
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => {
          arrived();
          // The relay answers only after the watchdog's own delivery.timeout has passed.
          void accepted.then(() => {
            received++;
            callback();
          });
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
    const port = (relay.server.address() as AddressInfo).port;
    try {
      h = Harness.open({
        channels: [
          {
            name: 'mail',
            type: 'email',
            smtp: { host: '127.0.0.1', port, secure: 'none', timeout: 30_000 },
            from: 'dw@example.com',
            to: ['ops@example.com'],
          },
        ],
        notify: { delivery },
      });
      expect(sendLimitMs(h.channels.get('mail')!, delivery.timeout)).toBe(30_000 * 13 + SEND_MARGIN_MS);
      h.cycle('runs', [finding('shop')]);
      const round = h.notifier.deliverDue();
      await inData;
      h.clock.advance(3 * delivery.timeout);
      accept();
      expect(await round).toMatchObject({ sent: 1, retried: 0 });
      expect(h.rows()).toMatchObject([{ status: 'sent', attempts: 1 }]);
      h.clock.advance(10 * MINUTE);
      await h.notifier.deliverDue();
      expect(received).toBe(1);
    } finally {
      accept();
      await h?.close();
      h = undefined;
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });

  it.each([
    [
      'a Slack channel with a shorter timeout keeps delivery.timeout',
      { name: 's', type: 'slack', webhook_url: 'https://hooks.example.com/x', timeout: 10_000 },
      15_000,
    ],
    [
      'a Slack channel with a longer timeout raises it',
      { name: 's', type: 'slack', webhook_url: 'https://hooks.example.com/x', timeout: 30_000 },
      32_000,
    ],
    [
      'an email channel: every SMTP step and recipient',
      {
        name: 'm',
        type: 'email',
        smtp: { host: 'mx', timeout: 15_000 },
        from: 'a@example.com',
        to: ['b@example.com', 'c@example.com'],
      },
      15_000 * 14 + 2_000,
    ],
    ['the log channel answers at once', { name: 'l', type: 'log' }, 15_000],
  ])('%s', async (_name, config, limit) => {
    const [channel] = buildChannels([channelConfigSchema.parse(config)], {
      logger: silentLogger,
      clock: new ManualClock(),
    }).values();
    try {
      expect(sendLimitMs(channel!, 15_000)).toBe(limit);
    } finally {
      await closeChannels([channel!]);
    }
  });
});

describe('never blocks', () => {
  it('one hanging channel does not stall another; the hanging send times out on the clock', async () => {
    h = Harness.open({ channels: [slackTo('slow', receiver.url), slackTo('fast', other.url)], notify: { delivery } });
    receiver.setMode('hang');
    h.cycle('runs', [finding('shop')]);
    h.notifier.start();
    // Marked sent: the "fast" loop is asleep until the next interval.
    await vi.waitFor(() => expect(h?.rows(`channel = 'fast' AND status = 'sent'`)).toHaveLength(1));
    await vi.waitFor(() => expect(receiver.requests).toBe(1));

    // Another cycle while "slow" still hangs: "fast" delivers it on its next round, once it sleeps
    // until then (time moved before it is asleep would not wake it).
    h.cycle('urls', [finding('crm', { check: 'url_checks' })]);
    const clock = h.clock;
    await vi.waitFor(() => expect(clock.nextWakeAt()).toBeLessThanOrEqual(clock.now() + delivery.interval));
    h.clock.advance(delivery.interval);
    await vi.waitFor(() => expect(other.received).toHaveLength(2));

    // The hanging send hits its time limit on the clock (the channel's own 60 s plus the 2 s
    // margin, longer than delivery.timeout) and is recorded as a failed attempt.
    h.clock.advance(62 * SECOND);
    await vi.waitFor(() =>
      expect(h?.rows(`channel = 'slow'`).map((r) => r.last_error)).toEqual(['no answer within 62000 ms', null]),
    );
    await h.notifier.stop();
  });

  it('stop() abandons a send in flight at once: its row stays due as it was, for the next start', async () => {
    h = Harness.open({ channels: [slackTo('slow', receiver.url)], notify: { delivery } });
    receiver.setMode('hang');
    h.cycle('runs', [finding('shop')]);
    h.notifier.start();
    await vi.waitFor(() => expect(receiver.requests).toBe(1));
    // The clock stands still: a stop that waited for the send's time limit would never return.
    await h.notifier.stop();
    expect(h.rows()).toMatchObject([{ status: 'pending', attempts: 0, last_error: null }]);
    receiver.setMode('ok');
    h = await h.restart();
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1 });
  });
});

describe('flush', () => {
  it('sends what is due before the deadline', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery } });
    h.notifier.start();
    h.cycle('runs', [finding('shop')]);
    h.cycle('urls', [finding('crm', { check: 'url_checks' })]);
    const report = await h.notifier.flush(10 * SECOND);
    expect(report).toMatchObject({ sent: 2, waiting: 0, timedOut: false });
    expect(receiver.received).toHaveLength(2);
  });

  it('gives up at the deadline and leaves the rest pending for the next start', async () => {
    h = Harness.open({
      channels: [slackTo('ops', receiver.url)],
      notify: { delivery: { ...delivery, timeout: MINUTE } },
    });
    receiver.setMode('hang');
    h.cycle('runs', [finding('shop')]);
    const flushing = h.notifier.flush(3 * SECOND);
    await vi.waitFor(() => expect(receiver.requests).toBe(1));
    h.clock.advance(3 * SECOND);
    expect(await flushing).toMatchObject({ sent: 0, waiting: 1, timedOut: true });
    expect(h.rows()).toMatchObject([{ status: 'pending' }]);

    // Next start: delivered.
    receiver.setMode('ok');
    h = await h.restart();
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1 });
  });
});

// A wall clock stepped back (NTP, a VM restored or moved) must not keep a channel silent for the
// step: a wait the delivery set itself is never longer than the longest it sets.
describe('a wall clock stepped back', () => {
  /** The warnings that say the clock went back, as their messages. */
  const clockWarnings = (harness: Harness): string[] =>
    harness.log.lines
      .map((line) => (JSON.parse(line) as { msg: string }).msg)
      .filter((msg) => msg.startsWith('the clock went back'));

  /** One alert whose first send the receiver answers as `mode` says, then the clock stepped back by `backMs`. */
  async function failedThenStepped(mode: 'rateLimit' | 'notFound', backMs: number): Promise<Harness> {
    const harness = Harness.open({ channels: [slackTo('ops', receiver.url)], notify: { delivery } });
    receiver.setMode(mode);
    harness.cycle('runs', [finding('shop')]);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 0, waiting: 1 });
    receiver.setMode('ok');
    harness.clock.stepBack(backMs);
    harness.clock.advance(delivery.interval);
    return harness;
  }

  it('ends a channel paused by a Retry-After within one round, not the step later', async () => {
    h = await failedThenStepped('rateLimit', HOUR);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    expect(clockWarnings(h)).toEqual([
      "the clock went back: channel ops's pause ended early (it was set for 2026-11-02T12:02:00Z, now 2026-11-02T11:00:05Z)",
      'the clock went back: 1 notifications of channel ops are retried early (it was set for 2026-11-02T12:02:00Z, now 2026-11-02T11:00:05Z)',
    ]);
    // Said once: the pause is over in the state too.
    h.clock.advance(delivery.interval);
    await h.notifier.deliverDue();
    expect(clockWarnings(h)).toHaveLength(2);
    expect(h.rows()).toMatchObject([{ status: 'sent', attempts: 2 }]);
  });

  it('a step shorter than the longest wait cannot be told from a real pause: the pause is honoured', async () => {
    h = await failedThenStepped('rateLimit', 10 * MINUTE);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, waiting: 1 });
    expect(receiver.requests).toBe(1);
    expect(clockWarnings(h)).toEqual([]);
  });

  it('retries a permanently refused row at once, not at max_backoff plus the step', async () => {
    h = await failedThenStepped('notFound', HOUR);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    // A 404 refuses the channel itself: its pause, as well as the row's wait, ends early.
    expect(clockWarnings(h)).toEqual([
      "the clock went back: channel ops's pause ended early (it was set for 2026-11-02T12:05:00Z, now 2026-11-02T11:00:05Z)",
      'the clock went back: 1 notifications of channel ops are retried early (it was set for 2026-11-02T12:05:00Z, now 2026-11-02T11:00:05Z)',
    ]);
  });

  it('a restart after the step sends what waited on the paused channel', async () => {
    h = await failedThenStepped('rateLimit', HOUR);
    h = await h.restart();
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  /**
   * Two routes repeating at 1 h and 90 min: after an hour the alert repeats, sent on the fast
   * route and held on the slow one until its own interval.
   */
  async function repeatHeldOnSlowRoute(metrics?: Metrics): Promise<Harness> {
    const harness = Harness.open({
      channels: [slackTo('fast', receiver.url), slackTo('slow', other.url)],
      alerts: { repeat_interval: HOUR },
      notify: {
        routes: [
          { name: 'fast', channels: ['fast'], repeat_interval: HOUR, continue: true },
          { name: 'slow', channels: ['slow'], repeat_interval: 90 * MINUTE, continue: false },
        ],
      },
      ...(metrics && { metrics }),
    });
    harness.cycle('runs', [finding('shop')]);
    await harness.notifier.deliverDue();
    harness.clock.advance(HOUR);
    expect(harness.cycle('runs', [finding('shop')]).decisions).toEqual({ deliver: 1, repeat_waiting: 1 });
    return harness;
  }

  it('counts a row held for its route apart from what waits to be sent', async () => {
    // A backlog alert on the waiting gauge must not fire for a repeat held on purpose.
    const metrics = new Metrics({ processMetrics: false });
    h = await repeatHeldOnSlowRoute(metrics);
    expect(await h.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0, held: 1 });
    const gauge = async (g: 'outboxWaiting' | 'outboxHeld', channel: string) =>
      (await metrics[g].get()).values.find((v) => v.labels.channel === channel)?.value;
    expect([await gauge('outboxWaiting', 'slow'), await gauge('outboxHeld', 'slow')]).toEqual([0, 1]);
    expect([await gauge('outboxWaiting', 'fast'), await gauge('outboxHeld', 'fast')]).toEqual([0, 0]);
  });

  it("sends a repeat held for its route's interval once the step shows, not the step later", async () => {
    // The longest interval of any route (the default's too) bounds what a held repeat may wait.
    h = await repeatHeldOnSlowRoute();
    await h.notifier.deliverDue();
    expect(other.received).toHaveLength(1);

    // Restored from a snapshot two hours old: the slow channel was told "after" now, and its
    // repeat, due at 13:30, would wait until 13:30 on the stepped clock.
    h.clock.stepBack(2 * HOUR);
    h.clock.advance(delivery.interval);
    await h.notifier.deliverDue();
    await h.notifier.deliverDue();
    expect(other.received).toHaveLength(2);
    expect(clockWarnings(h)).toEqual([
      'the clock went back: 1 held repeats are decided again early (it was set for 2026-11-02T13:30:00Z, now 2026-11-02T11:00:05Z)',
    ]);
  });
});
