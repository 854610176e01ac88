/**
 * Acknowledgements through the outbox: written by `acknowledge` (here, as the CLI in another
 * process would), routed once at the next delivery round, and sent only where wanted: a channel
 * whose kind shows them (a living message), or a route with `send_acknowledged: true`; email and
 * Slack webhooks stay quiet by default. An acknowledgement never restarts a channel's repeat
 * interval, never releases or supersedes what a silence holds, and is not announced once its alert
 * is over. A Slack webhook told of one (by its route) says who, and mentions nobody.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge, unacknowledge, type AcknowledgeRequest } from '../../src/alerts/acknowledge.js';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { createSilence } from '../../src/alerts/silences.js';
import type { Channel, Notification, SendResult } from '../../src/notify/channels/channel.js';
import { describeEvent } from '../../src/notify/channels/describe.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { alertEvent, NOW } from './channels/fixtures.js';
import { finding, Harness, HOUR, MINUTE, payloadText, slackTo } from './notify-fixture.js';

let receiver: WebhookReceiver;
let sink: SmtpSink;
let h: Harness | undefined;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  sink = await startSmtpSink();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver.close();
  await sink.close();
});

const mailTo = (name: string) => ({
  name,
  type: 'email',
  smtp: { host: sink.host, port: sink.port, secure: 'none', timeout: 5000 },
  from: 'dw@example.com',
  to: ['ops@example.com'],
});

/**
 * A channel of a kind that keeps one message per alert (what the Slack app channel is): it shows
 * acknowledgements unless a route says otherwise, and keeps what it was asked to deliver.
 */
function livingChannel(): Channel<Notification> & { delivered: Notification[] } {
  const delivered: Notification[] = [];
  return {
    kind: 'living',
    sendTimeoutMs: 0,
    showsAcknowledgements: true,
    delivered,
    render: (n) => n,
    send: (n): Promise<SendResult> => {
      delivered.push(n);
      return Promise.resolve({ outcome: 'ok' });
    },
  };
}

const FP = 'failed_runs/shop';
const ask = (over: Partial<AcknowledgeRequest> = {}): AcknowledgeRequest => ({
  fingerprint: FP,
  by: 'alice',
  via: 'cli',
  comment: 'rolling back',
  now: h!.clock.now(),
  ...over,
});
const decisionsOf = (kind: string) => h!.rows(`kind = '${kind}'`).map((r) => `${r.channel}:${r.status}:${r.decision}`);
const kindsIn = (n: Notification) => (n.type === 'alerts' ? n.events.map((e) => e.kind) : [n.topic]);

describe('acknowledgements through the outbox', () => {
  it('are routed once at the delivery round; email and a Slack webhook stay quiet, a living message is told', async () => {
    const living = livingChannel();
    h = Harness.open({ channels: [slackTo('hook', receiver.url), mailTo('mail')], builtChannels: { app: living } });
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    expect([receiver.received.length, sink.messages.length, living.delivered.length]).toEqual([1, 1, 1]);

    h.clock.advance(MINUTE);
    expect(acknowledge(h.store, ask()).outcome).toBe('acknowledged');
    // Written by the acknowledgement alone: nothing routed before the round.
    expect(h.rows("kind = 'acknowledged'")).toEqual([]);
    await h.notifier.deliverDue();
    expect(decisionsOf('acknowledged').sort()).toEqual([
      'app:sent:deliver',
      'hook:suppressed:acknowledgement_not_sent',
      'mail:suppressed:acknowledgement_not_sent',
    ]);
    expect([receiver.received.length, sink.messages.length]).toEqual([1, 1]);
    expect(living.delivered.map(kindsIn)).toEqual([['firing'], ['acknowledged']]);
    const told = living.delivered[1]!;
    expect(told.type === 'alerts' && told.events[0]!.acknowledgement).toMatchObject({
      by: 'alice',
      via: 'cli',
      comment: 'rolling back',
    });
    expect(h.store.db.prepare('SELECT COUNT(*) AS n FROM unrouted_events').get()).toEqual({ n: 0 });

    // Routed once: later rounds route nothing more.
    await h.notifier.deliverDue();
    expect(h.rows("kind = 'acknowledged'")).toHaveLength(3);

    unacknowledge(h.store, ask({ by: 'bob' }));
    await h.notifier.deliverDue();
    expect(living.delivered.map(kindsIn).at(-1)).toEqual(['unacknowledged']);
    expect([receiver.received.length, sink.messages.length]).toEqual([1, 1]);
  });

  it('go to email and a Slack webhook where their route has send_acknowledged: true, saying who, mentioning nobody', async () => {
    h = Harness.open({
      channels: [slackTo('hook', receiver.url, { mention: { critical: '<!here>' } }), mailTo('mail')],
      notify: { routes: [{ channels: ['hook', 'mail'], send_acknowledged: true, continue: false }] },
    });
    h.cycle('runs', [finding('shop', {}, 'critical')]);
    await h.notifier.deliverDue();
    expect(payloadText(receiver.received[0])).toContain('<!here>');
    acknowledge(h.store, ask());
    await h.notifier.deliverDue();
    expect(decisionsOf('acknowledged').sort()).toEqual(['hook:sent:deliver', 'mail:sent:deliver']);
    expect(payloadText(receiver.received[1])).toContain('CRITICAL · acknowledged by alice');
    expect(payloadText(receiver.received[1])).not.toContain('<!here>');
    expect(sink.messages[1]?.text).toContain('CRITICAL · acknowledged by alice');
  });

  it('a route with send_acknowledged: false keeps them from a living message too', async () => {
    const living = livingChannel();
    h = Harness.open({
      channels: [],
      builtChannels: { app: living },
      notify: { routes: [{ channels: ['app'], send_acknowledged: false, continue: false }] },
    });
    h.cycle('runs', [finding('shop')]);
    acknowledge(h.store, ask());
    await h.notifier.deliverDue();
    expect(decisionsOf('acknowledged')).toEqual(['app:suppressed:acknowledgement_not_sent']);
    expect(living.delivered.map(kindsIn)).toEqual([['firing']]);
  });

  it('never restart a route repeat interval: the repeat goes when it is due after an unacknowledgement', async () => {
    const living = livingChannel();
    h = Harness.open({ channels: [], builtChannels: { app: living } });
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    h.clock.advance(3 * HOUR);
    acknowledge(h.store, ask());
    await h.notifier.deliverDue();
    h.clock.advance(30 * MINUTE);
    unacknowledge(h.store, ask());
    await h.notifier.deliverDue();
    h.clock.advance(30 * MINUTE);
    // 4h after the firing, 1h after the acknowledgement was sent: the repeat is due.
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    expect(decisionsOf('repeat')).toEqual(['app:sent:deliver']);
    expect(living.delivered.map(kindsIn)).toEqual([['firing'], ['acknowledged'], ['unacknowledged'], ['repeat']]);
  });

  it('leave a firing held by a silence held, and are held with it', async () => {
    const living = livingChannel();
    h = Harness.open({ channels: [], builtChannels: { app: living } });
    createSilence(h.store, {
      matchers: [{ name: 'app', op: '=', value: 'shop' }],
      durationMs: HOUR,
      reason: 'maintenance',
      createdBy: 'ops',
      now: h.clock.now(),
    });
    h.cycle('runs', [finding('shop')]);
    acknowledge(h.store, ask());
    await h.notifier.deliverDue();
    expect(decisionsOf('firing')).toEqual(['app:held:silenced']);
    // Never told it fires, so nothing to tell of who has it.
    expect(decisionsOf('acknowledged')).toEqual(['app:suppressed:acknowledged_quietly']);
    h.clock.advance(HOUR);
    await h.notifier.deliverDue();
    expect(living.delivered.map(kindsIn)).toEqual([['firing']]);
  });

  it('are not announced when their alert is over by the delivery round', async () => {
    const living = livingChannel();
    h = Harness.open({ channels: [], builtChannels: { app: living } });
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    acknowledge(h.store, ask());
    h.clock.advance(MINUTE);
    // Resolved by the next cycle before any delivery round routed the acknowledgement.
    h.cycle('runs', []);
    await h.notifier.deliverDue();
    expect(decisionsOf('acknowledged')).toEqual(['app:suppressed:superseded']);
    expect(living.delivered.map(kindsIn)).toEqual([['firing'], ['resolved']]);
    const resolved = living.delivered[1]!;
    expect(resolved.type === 'alerts' && resolved.events[0]!.acknowledgementCleared?.by).toBe('alice');
  });
});

describe('describeEvent of an acknowledgement', () => {
  it.each<[string, Partial<AlertEvent>, string]>([
    [
      'acknowledged',
      { kind: 'acknowledged', acknowledgement: { by: 'alice', via: 'slack', at: '2026-11-01T12:00:00.000Z' } },
      'CRITICAL · acknowledged by alice',
    ],
    [
      'unacknowledged',
      { kind: 'unacknowledged', acknowledgement: { by: 'bob', via: 'cli', at: '2026-11-01T12:00:00.000Z' } },
      'CRITICAL · acknowledgement given back by bob',
    ],
  ])('%s says who in its status, and still shows the problem', (_kind, over, status) => {
    const d = describeEvent(alertEvent(over), NOW);
    expect(d.status).toBe(status);
    expect(d.tone).toBe('critical');
    expect(d.summary).toBe('Update of shop (production) failed at step install');
  });
});
