/**
 * A maintenance window: a silence made ahead of time, on a fake clock. Before its start it mutes
 * nothing and is listed as scheduled; from its start to its end it mutes every matching alert
 * (and only those); when it ends, what still fires is announced once and what ended under it stays
 * quiet; the next daily digest lists what it held.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silenceListing } from '../../src/alerts/silence-listing.js';
import { createSilence, silenceState } from '../../src/alerts/silences.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { STATE_BACKENDS, testCluster } from '../helpers/state-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { finding, Harness, HOUR, MINUTE, payloadText, slackTo } from './notify-fixture.js';

let receiver: WebhookReceiver;
let h: Harness | undefined;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver.close();
});

const texts = () => receiver.received.map(payloadText);
const alertTexts = () => texts().filter((t) => !t.includes('Daily digest'));

describe.each(STATE_BACKENDS)('a maintenance window planned ahead, on $name', (backend) => {
  // The PostgreSQL server starts on first use: before the tests, so its start counts against no test's time.
  beforeAll(() => {
    if (backend.engine === 'postgres') testCluster();
  }, 120_000);

  it(
    'mutes nothing before its start, every matching alert between start and end, and is listed in the digest',
    { timeout: 90_000 },
    async () => {
      // 20:00 UTC; the window is 22:00–00:00; the digest at 09:00 UTC.
      h = Harness.open({
        backend,
        clock: new ManualClock('2026-11-02T20:00:00Z'),
        channels: [slackTo('ops', receiver.url)],
        notify: { digest: { enabled: true, at: '09:00', time_zone: 'UTC', channels: [] } },
      });
      const window = createSilence(h.store, {
        matchers: [{ name: 'app', op: '=', value: 'shop' }],
        startsAt: Date.parse('2026-11-02T22:00:00Z'),
        durationMs: 2 * HOUR,
        reason: 'database upgrade',
        createdBy: 'alice',
        now: h.clock.now(),
      });
      const state = () => silenceListing(h!.store, { now: h!.clock.now() }).map((l) => l.state);
      expect(state()).toEqual(['scheduled']);

      // Before its start: shop's alert goes out.
      h.cycle('runs', [finding('shop')]);
      await h.notifier.deliverDue();
      expect(alertTexts()).toHaveLength(1);
      h.cycle('runs', []);
      await h.notifier.deliverDue();
      expect(alertTexts()).toHaveLength(2);

      // In the window: shop's new alerts are held, another app's are not.
      h.clock.set('2026-11-02T22:00:00Z');
      expect(state()).toEqual(['active']);
      h.cycle('runs', [finding('shop'), finding('shop-db', { app: 'shop' }), finding('crm')]);
      await h.notifier.deliverDue();
      expect(alertTexts()).toHaveLength(3);
      expect(alertTexts()[2]).toContain('Problem crm');
      expect(h.rows(`decision = 'silenced'`).map((r) => r.fingerprint)).toEqual([
        'failed_runs/shop',
        'failed_runs/shop-db',
      ]);
      h.clock.advance(HOUR);
      // One ends under the window: it stays quiet.
      h.cycle('runs', [finding('shop'), finding('crm')]);
      await h.notifier.deliverDue();
      expect(alertTexts()).toHaveLength(3);

      // The window ends: what still fires is announced once, now.
      h.clock.set('2026-11-03T00:00:00Z');
      expect(silenceState(window, h.clock.now())).toBe('expired');
      await h.notifier.deliverDue();
      expect(alertTexts()).toHaveLength(4);
      expect(alertTexts()[3]).toContain('Problem shop');
      expect(alertTexts()[3]).not.toContain('shop-db');
      h.clock.advance(MINUTE);
      await h.notifier.deliverDue();
      expect(alertTexts()).toHaveLength(4);
      expect(state()).toEqual([]);

      // The digest of the day lists what the window held.
      h.clock.set('2026-11-03T09:00:00Z');
      await h.notifier.deliverDue();
      // (The 2 November digest went out at the first round, 09:00 having passed: this is the 3rd's.)
      const digest = texts().find((t) => t.includes('Daily digest 2026-11-03')) ?? '';
      expect(digest).toContain('Silences in the last 24 hours');
      expect(digest).toContain(
        `${window.id} app=shop, 2026-11-02 22:00 UTC to 2026-11-03 00:00 UTC, by alice (database upgrade): held 2: Problem shop; Problem shop-db`,
      );
    },
  );
});
