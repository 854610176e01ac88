import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import { RemediationStore } from '../../src/remediation/remediation-store.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';
import { finding, Harness, HOUR, MINUTE, payloadText, slackTo } from './notify-fixture.js';

let a: WebhookReceiver;
let b: WebhookReceiver;
let h: Harness | undefined;

beforeEach(async () => {
  a = await startWebhookReceiver();
  b = await startWebhookReceiver();
});

afterEach(async () => {
  await h?.close();
  h = undefined;
  await a.close();
  await b.close();
});

/** One remediation that succeeded and one skip, written the way remediation writes its audit. */
function auditRetry(h: Harness): void {
  const audit = new RemediationStore(h.store);
  const row = {
    at: h.clock.now(),
    policy: 'retry-nonprod',
    action: 'runs.retry',
    recordType: 'run',
    fingerprint: null,
    key: null,
    answer: null,
    runId: null,
    detail: null,
  };
  audit.audit({ ...row, recordId: 42, decision: 'outcome', reason: '', outcome: 'succeeded' });
  audit.audit({ ...row, recordId: 43, decision: 'skipped', reason: 'max_attempts', outcome: null });
}

const digests = (r: WebhookReceiver) => r.received.map(payloadText).filter((t) => t.includes('Daily digest'));

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  describe('daily digest', () => {
    it('goes out once a day per channel at the local time, with open, opened, resolved and remediation; a restart does not resend it', async () => {
      h = Harness.open({
        backend,
        // 08:00 in Berlin (UTC+1 in November).
        clock: new ManualClock('2026-11-02T07:00:00Z'),
        channels: [slackTo('a', a.url), slackTo('b', b.url)],
        notify: { digest: { enabled: true, at: '09:00', time_zone: 'Europe/Berlin', channels: ['a'] } },
      });
      auditRetry(h);
      h.cycle('runs', [finding('shop', {}, 'critical'), finding('crm')]);
      h.clock.advance(MINUTE);
      h.cycle('runs', [finding('shop', {}, 'critical')]);
      await h.notifier.deliverDue();
      expect(digests(a)).toEqual([]);

      // 09:01 in Berlin.
      h.clock.set('2026-11-02T08:01:00Z');
      await h.notifier.deliverDue();
      expect(digests(a)).toHaveLength(1);
      expect(digests(b)).toEqual([]);
      const digest = digests(a)[0] ?? '';
      expect(digest).toContain('Daily digest 2026-11-02: 1 open, 2 opened, 1 resolved');
      expect(digest).toContain('Problem shop');
      expect(digest).toContain('retry-nonprod runs.retry run #42: succeeded');
      expect(digest).not.toContain('max_attempts');

      h = await h.restart();
      h.clock.advance(HOUR);
      await h.notifier.deliverDue();
      expect(digests(a)).toHaveLength(1);

      // The next day, again once.
      h.clock.set('2026-11-03T08:00:00Z');
      await h.notifier.deliverDue();
      await h.notifier.deliverDue();
      expect(digests(a)).toHaveLength(2);
      expect(digests(a)[1]).toContain('Daily digest 2026-11-03: 1 open, 0 opened, 0 resolved');
      // Yesterday's remediation is more than 24 hours old now.
      expect(digests(a)[1]).not.toContain('retry-nonprod');
    });

    it('is off by default', async () => {
      h = Harness.open({ backend, channels: [slackTo('a', a.url)] });
      h.clock.advance(24 * HOUR);
      await h.notifier.deliverDue();
      expect(a.requests).toBe(0);
    });
  });
});
