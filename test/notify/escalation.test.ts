/**
 * Escalation (`escalate_after` / `escalate_to` on a route) through the outbox, on a fake clock: an
 * alert still firing and unacknowledged when its route's time is up is sent to the escalation
 * channels once, naming the channels told before; not before, not again (more rounds, a restart,
 * a second process on the same state), not when acknowledged, resolved or silenced first. Once
 * told, the escalation channel hears the alert through to its resolve.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import { createSilence } from '../../src/alerts/silences.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { STATE_BACKENDS, testCluster } from '../helpers/state-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { finding, Harness, MINUTE, payloadText, slackTo } from './notify-fixture.js';

let receiver: WebhookReceiver;
let sink: SmtpSink;
const open: Harness[] = [];

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  sink = await startSmtpSink();
});
afterEach(async () => {
  for (const h of open.splice(0).reverse()) await h.close();
  await receiver.close();
  await sink.close();
});

const FP = 'failed_runs/shop';
const pager = () => ({
  name: 'pager',
  type: 'email',
  smtp: { host: sink.host, port: sink.port, secure: 'none', timeout: 5000 },
  from: 'dw@example.com',
  to: ['oncall@example.com'],
});
const routes = [{ channels: ['ops'], escalate_after: 15 * MINUTE, escalate_to: ['pager'], continue: false }];

function harness(over: Partial<Parameters<typeof Harness.open>[0]> = {}): Harness {
  const h = Harness.open({ channels: [slackTo('ops', receiver.url), pager()], notify: { routes }, ...over });
  open.push(h);
  return h;
}

/**
 * Moves the clock on by `minutes` in `rounds` equal steps, a delivery round after each, as the
 * daemon's loop would (fewer rounds than minutes: the same decisions, fewer statements on a
 * loaded machine).
 */
async function pass(h: Harness, minutes: number, rounds = Math.min(minutes, 3)): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    h.clock.advance((minutes * MINUTE) / rounds);
    await h.notifier.deliverDue();
  }
}

const escalations = (h: Harness) => h.rows(`kind = 'escalated'`).map((r) => `${r.channel}:${r.status}:${r.decision}`);

describe.each(STATE_BACKENDS)('escalation on $name', (backend) => {
  // The PostgreSQL server starts on first use: before the tests, so its start counts against no test's time.
  beforeAll(() => {
    if (backend.engine === 'postgres') testCluster();
  }, 120_000);

  it(
    'sends an unacknowledged alert to the escalation channel once, at escalate_after, naming who was told',
    { timeout: 90_000 },
    async () => {
      const h = harness({ backend });
      h.cycle('runs', [finding('shop', {}, 'critical')]);
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(1);

      await pass(h, 14);
      expect(sink.messages).toHaveLength(0);
      await pass(h, 1);
      expect(escalations(h)).toEqual(['pager:sent:deliver']);
      expect(sink.messages).toHaveLength(1);
      expect(sink.messages[0]?.text).toContain('unacknowledged for 15m, escalated (told before: ops)');
      expect(sink.messages[0]?.text).toContain('Problem shop');

      // Never twice: more rounds, a second process on the same state, a restart.
      await pass(h, 30);
      const twin = harness({ backend, state: h.state, clock: h.clock, dir: h.dir });
      await twin.notifier.deliverDue();
      const again = await h.restart();
      open.splice(open.indexOf(h), 1, again);
      await pass(again, 5);
      expect(escalations(again)).toEqual(['pager:sent:deliver']);
      expect(sink.messages).toHaveLength(1);

      // The pager was told it fires: it is told it is over.
      again.cycle('runs', []);
      await again.notifier.deliverDue();
      expect(sink.messages).toHaveLength(2);
      expect(sink.messages[1]?.subject).toMatch(/RESOLVED/);
      expect(payloadText(receiver.received.at(-1))).toContain('RESOLVED');
    },
  );

  it('two processes escalating at the same moment write one escalation', { timeout: 90_000 }, async () => {
    const h = harness({ backend });
    const twin = harness({ backend, state: h.state, clock: h.clock, dir: h.dir });
    h.cycle('runs', [finding('shop')]);
    h.clock.advance(16 * MINUTE);
    await Promise.all([h.notifier.deliverDue(), twin.notifier.deliverDue()]);
    expect(h.rows(`kind = 'escalated'`)).toHaveLength(1);
  });
});

describe('what stops an escalation', () => {
  it.each([
    {
      what: 'an acknowledgement',
      act: (h: Harness) => acknowledge(h.store, { fingerprint: FP, by: 'alice', via: 'cli', now: h.clock.now() }),
    },
    { what: 'the resolve', act: (h: Harness) => h.cycle('runs', []) },
  ])('$what before escalate_after: the pager is never told', async ({ act }) => {
    const h = harness();
    h.cycle('runs', [finding('shop')]);
    await pass(h, 10);
    act(h);
    await pass(h, 60);
    expect(escalations(h)).toEqual([]);
    expect(sink.messages).toHaveLength(0);
  });

  it('a silence holds it; still unanswered when the silence ends, it escalates then, once', async () => {
    const h = harness();
    h.cycle('runs', [finding('shop')]);
    createSilence(h.store, {
      matchers: [{ name: 'app', op: '=', value: 'shop' }],
      durationMs: 30 * MINUTE,
      reason: 'deploying',
      createdBy: 'alice',
      now: h.clock.now(),
    });
    await pass(h, 29);
    expect(escalations(h)).toEqual([]);
    await pass(h, 2);
    // The ops channel hears it when the silence ends; the pager at the same round, naming it.
    expect(escalations(h)).toEqual(['pager:sent:deliver']);
    expect(sink.messages[0]?.text).toContain('told before: ops');
    await pass(h, 30);
    expect(sink.messages).toHaveLength(1);
  });

  it('a new firing after a resolve is a new life: it escalates again, once', async () => {
    const h = harness();
    h.cycle('runs', [finding('shop')]);
    await pass(h, 16);
    h.cycle('runs', []);
    await pass(h, 1);
    h.cycle('runs', [finding('shop')]);
    await pass(h, 14);
    expect(escalations(h)).toEqual(['pager:sent:deliver']);
    await pass(h, 2);
    expect(escalations(h)).toEqual(['pager:sent:deliver', 'pager:sent:deliver']);
    // The new firing itself goes only to the route's channels, not to the pager told in the old life.
    expect(h.rows(`kind = 'firing' AND channel = 'pager'`)).toEqual([]);
  });
});
