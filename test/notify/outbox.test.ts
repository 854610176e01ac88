import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import { AlertStore } from '../../src/alerts/alert-store.js';
import { createSilence, expireSilence } from '../../src/alerts/silences.js';
import type { CheckName } from '../../src/detectors/registry.js';
import type { Finding } from '../../src/detectors/finding.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import type { Severity } from '../../src/lib/alert-vocabulary.js';
import { inhibitionSummary } from '../../src/notify/outbox.js';
import { OutboxStore } from '../../src/notify/outbox-store.js';
import { alertEvent } from './channels/fixtures.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';
import { finding, Harness, HOUR, MINUTE, payloadText, SECOND, slackTo, T0 } from './notify-fixture.js';

let receiver: WebhookReceiver;
let other: WebhookReceiver;
let h: Harness | undefined;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
  other = await startWebhookReceiver();
});

/** Two channels: `fast` (receiver) repeats every hour, `slow` (other) every `slowMs`. */
function fastAndSlow(backend: (typeof STATE_BACKENDS)[number], slowMs: number): Harness {
  return Harness.open({
    backend,
    channels: [slackTo('fast', receiver.url), slackTo('slow', other.url)],
    notify: {
      routes: [
        { name: 'fast', channels: ['fast'], repeat_interval: HOUR, continue: true },
        { name: 'slow', channels: ['slow'], repeat_interval: slowMs, continue: false },
      ],
    },
  });
}

afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver.close();
  await other.close();
});

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  describe('grouping a storm', () => {
    // Room on a loaded machine: on PostgreSQL each of the storm's statements is a round trip to
    // the connection's thread, and the file's first case may also start the run's shared server
    // (initdb, start, the migrated template). It took 31.9 s, past the default 30 s, at a load of
    // 10-11 with a CPU busy loop beside it; 1.9 s on SQLite.
    it(
      '500 new alerts in one cycle become one message per check and environment, with "and N more"',
      {
        timeout: 180_000,
      },
      async () => {
        h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
        const storm = [
          ...Array.from({ length: 300 }, (_, i) => finding(`prod-${i}`, { environment_type: 'production' })),
          ...Array.from({ length: 150 }, (_, i) => finding(`stg-${i}`, { environment_type: 'staging' })),
          ...Array.from({ length: 50 }, (_, i) =>
            finding(`cert-${i}`, { check: 'certificates', environment_type: 'production' }),
          ),
        ];
        const pass = h.cycle('runs', storm);
        expect(pass.decisions).toEqual({ deliver: 500 });

        const report = await h.notifier.deliverDue();

        expect(receiver.received).toHaveLength(3);
        expect(report).toMatchObject({ sent: 3, rowsSent: 500, waiting: 0 });
        const texts = receiver.received.map(payloadText);
        expect(texts.some((t) => t.includes('and 290 more'))).toBe(true);
        expect(texts.some((t) => t.includes('and 140 more'))).toBe(true);
        expect(texts.some((t) => t.includes('and 40 more'))).toBe(true);
        expect(h.rows("status <> 'sent'")).toEqual([]);

        // Delivered once: another round sends nothing.
        await h.notifier.deliverDue();
        expect(receiver.received).toHaveLength(3);
      },
    );

    it('sends the worst group first: production criticals before staging warnings read first, over last', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
      h.cycle('runs', [finding('was-wrong', { environment_type: 'development' })]);
      await h.notifier.deliverDue();
      h.clock.advance(MINUTE);
      const staging = Array.from({ length: 3 }, (_, i) => finding(`stg-${i}`, { environment_type: 'staging' }));
      const production = Array.from({ length: 3 }, (_, i) => finding(`prod-${i}`, {}, 'critical'));
      // Written in the order read: the resolve first, then the staging warnings, then production.
      h.cycle('runs', [...staging, ...production]);

      await h.notifier.deliverDue();

      const texts = receiver.received.slice(1).map(payloadText);
      expect(texts).toHaveLength(3);
      expect(texts[0]).toContain('Problem prod-0');
      expect(texts[1]).toContain('Problem stg-0');
      expect(texts[2]).toContain('Problem was-wrong');
    });
  });

  describe('one pass, read once', () => {
    // A pass reads the notification log and held rows of all its alerts at its start: an alert
    // the pass has written for must be read again, or its second event is decided on stale facts.
    it("decides an alert's second event in the same pass on what its first one wrote", async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
      const alerts = new AlertStore(h.store);
      const now = h.clock.now();
      const { id: _f, ...firing } = alertEvent({ kind: 'firing' });
      const { id: _r, ...resolved } = alertEvent({ kind: 'resolved', endsAt: new Date(now).toISOString() });
      const pass = h.store.transaction(() => {
        const events = [alerts.insertEvent(firing, now), alerts.insertEvent(resolved, now)];
        return h!.notifier.enqueue(
          events.map((event) => event()),
          now,
        );
      });
      // Told it fires in this pass, so told it is over: not resolved quietly as never announced.
      expect(pass.decisions).toEqual({ deliver: 2 });
      expect(h.rows().map((r) => [r.kind, r.decision])).toEqual([
        ['firing', 'deliver'],
        ['resolved', 'deliver'],
      ]);
    });
  });

  describe('silences', () => {
    const silenceShop = (h: Harness, durationMs: number) =>
      createSilence(h.store, {
        matchers: [{ name: 'app', op: '=', value: 'shop' }],
        durationMs,
        reason: 'deploying',
        createdBy: 'test',
        now: h.clock.now(),
      });

    it('a silenced alert still firing when its 30m silence ends is announced then, once', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
      silenceShop(h, 30 * MINUTE);
      expect(h.cycle('runs', [finding('shop'), finding('crm')]).decisions).toEqual({ silenced: 1, deliver: 1 });
      await h.notifier.deliverDue();
      expect(receiver.received.map(payloadText).join()).not.toContain('Problem shop');
      expect(receiver.received.map(payloadText).join()).toContain('Problem crm');

      // Still under the silence: held, re-decided each round, not sent.
      h.clock.advance(29 * MINUTE);
      h.cycle('runs', [finding('shop'), finding('crm')]);
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(1);

      h.clock.advance(2 * MINUTE);
      h.cycle('runs', [finding('shop'), finding('crm')]);
      await h.notifier.deliverDue();
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(2);
      expect(payloadText(receiver.received[1])).toContain('Problem shop');
      expect(payloadText(receiver.received[1])).not.toContain('Problem crm');
      expect(h.rows(`fingerprint = 'failed_runs/shop'`).map((r) => `${r.status}:${r.decision}`)).toEqual([
        'sent:deliver',
      ]);
    });

    it('unsilence lifts the hold at the next round', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
      const silence = silenceShop(h, 2 * HOUR);
      h.cycle('runs', [finding('shop')]);
      await h.notifier.deliverDue();
      expect(receiver.requests).toBe(0);
      h.clock.advance(MINUTE);
      expect(expireSilence(h.store, silence.id, h.clock.now()).outcome).toBe('expired');
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(1);
      expect(payloadText(receiver.received[0])).toContain('Problem shop');
    });

    it('a silenced alert that resolves during its silence is never sent, neither firing nor resolved', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
      silenceShop(h, 30 * MINUTE);
      h.cycle('runs', [finding('shop')]);
      await h.notifier.deliverDue();
      h.clock.advance(10 * MINUTE);
      expect(h.cycle('runs', []).decisions).toEqual({ resolved_quietly: 2 });
      await h.notifier.deliverDue();
      h.clock.advance(HOUR);
      await h.notifier.deliverDue();
      expect(receiver.requests).toBe(0);
      expect(h.rows().map((r) => `${r.kind}:${r.status}:${r.decision}`)).toEqual([
        'firing:suppressed:resolved_quietly',
        'resolved:suppressed:resolved_quietly',
      ]);
    });

    it('a later event of a silenced alert replaces its held one: one announcement when the silence ends', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)], alerts: { repeat_interval: HOUR } });
      silenceShop(h, 90 * MINUTE);
      h.cycle('runs', [finding('shop')]);
      h.clock.advance(HOUR);
      // The lifecycle repeats it under the silence: the held firing is superseded by the held repeat.
      expect(h.cycle('runs', [finding('shop')]).decisions).toEqual({ superseded: 1, silenced: 1 });
      h.clock.advance(31 * MINUTE);
      await h.notifier.deliverDue();
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(1);
      expect(payloadText(receiver.received[0])).toContain('Problem shop');
    });
  });

  describe('per-route repeat interval and send_resolved', () => {
    it('each channel repeats at its own route interval (notification log per fingerprint and channel)', async () => {
      h = fastAndSlow(backend, 3 * HOUR);
      expect(h.notifier.lifecycleRepeatIntervalMs).toBe(HOUR);
      const decisions: string[] = [];
      for (let hour = 0; hour <= 3; hour++) {
        h.cycle('runs', [finding('shop')]);
        await h.notifier.deliverDue();
        decisions.push(
          h
            .rows(`id > (SELECT COALESCE(MAX(id), 0) - 2 FROM outbox)`)
            .map((r) => `${r.channel}:${r.kind}:${r.decision}`)
            .join(' '),
        );
        h.clock.advance(HOUR);
      }
      expect(decisions).toEqual([
        'fast:firing:deliver slow:firing:deliver',
        'fast:repeat:deliver slow:repeat:repeat_waiting',
        'fast:repeat:deliver slow:repeat:repeat_waiting',
        'fast:repeat:deliver slow:repeat:deliver',
      ]);
      expect(receiver.received).toHaveLength(4);
      expect(other.received).toHaveLength(2);
    });

    it('a route whose interval is no multiple of the smallest repeats at its own, not the next multiple', async () => {
      h = fastAndSlow(backend, 90 * MINUTE);
      const heard = { fast: [] as number[], slow: [] as number[] };
      for (let minutes = 0; minutes <= 5 * 60; minutes += 10) {
        const before = [receiver.received.length, other.received.length];
        h.cycle('runs', [finding('shop')]);
        await h.notifier.deliverDue();
        if (receiver.received.length > before[0]!) heard.fast.push(minutes);
        if (other.received.length > before[1]!) heard.slow.push(minutes);
        h.clock.advance(10 * MINUTE);
      }
      expect(heard).toEqual({ fast: [0, 60, 120, 180, 240, 300], slow: [0, 90, 180, 270] });
      // A repeat waiting for its route's time is replaced by the next one, never sent as well.
      expect(other.received).toHaveLength(4);
    });

    it('a repeat waiting for its route is not decided again before its time (each round reads only what can change)', async () => {
      h = fastAndSlow(backend, 90 * MINUTE);
      const firedAt = h.clock.now();
      h.cycle('runs', [finding('shop')]);
      await h.notifier.deliverDue();
      h.clock.advance(HOUR);
      expect(h.cycle('runs', [finding('shop')]).decisions).toEqual({ deliver: 1, repeat_waiting: 1 });
      const outbox = new OutboxStore(h.store);
      expect(outbox.held(firedAt + 89 * MINUTE, 90 * MINUTE)).toEqual([]);
      const due = outbox.held(firedAt + 90 * MINUTE, 90 * MINUTE);
      expect(due.map((r) => [r.channel, r.decision, r.nextAttemptAt])).toEqual([
        ['slow', 'repeat_waiting', firedAt + 90 * MINUTE],
      ]);
      h.clock.advance(30 * MINUTE);
      await h.notifier.deliverDue();
      expect(other.received).toHaveLength(2);
    });

    it.each([
      { what: 'resolves', act: (h: Harness) => h.cycle('runs', []), heard: ['firing', 'resolved'] },
      {
        what: 'is acknowledged',
        act: (h: Harness) =>
          acknowledge(h.store, {
            fingerprint: finding('shop').fingerprint,
            by: 'alice',
            via: 'cli',
            now: h.clock.now(),
          }),
        heard: ['firing'],
      },
    ])('a repeat waiting for its route is dropped when the alert $what first', async ({ act, heard }) => {
      h = fastAndSlow(backend, 90 * MINUTE);
      h.cycle('runs', [finding('shop')]);
      await h.notifier.deliverDue();
      h.clock.advance(HOUR);
      expect(h.cycle('runs', [finding('shop')]).decisions).toEqual({ deliver: 1, repeat_waiting: 1 });
      h.clock.advance(10 * MINUTE);
      act(h);
      h.clock.advance(HOUR);
      await h.notifier.deliverDue();
      expect(other.received.map((r) => (payloadText(r).includes('RESOLVED') ? 'resolved' : 'firing'))).toEqual(heard);
      expect(h.rows("channel = 'slow' AND kind = 'repeat'").map((r) => r.decision)).toEqual(['superseded']);
    });

    it('send_resolved: false on a route sends the firing but not the resolve', async () => {
      h = Harness.open({
        backend,
        channels: [slackTo('quiet', receiver.url), slackTo('full', other.url)],
        notify: {
          routes: [
            { channels: ['quiet'], send_resolved: false, continue: true },
            { channels: ['full'], continue: false },
          ],
        },
      });
      h.cycle('runs', [finding('shop')]);
      h.clock.advance(MINUTE);
      expect(h.cycle('runs', []).decisions).toEqual({ resolved_not_sent: 1, deliver: 1 });
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(1);
      expect(other.received).toHaveLength(1);
      expect(payloadText(other.received[0])).toContain('Problem shop');
    });
  });

  describe('mute windows', () => {
    const night = { name: 'night', time_zone: 'Europe/Berlin', times: [{ start: '22:00', end: '06:00' }] };

    it('holds a route during its window and delivers what still fires when it ends; what ended meanwhile stays quiet', async () => {
      h = Harness.open({
        backend,
        channels: [slackTo('ops', receiver.url)],
        notify: { mute_windows: [night], routes: [{ channels: ['ops'], mute_windows: ['night'], continue: false }] },
      });
      // 23:30 in Berlin.
      h.clock.set('2026-11-02T22:30:00Z');
      expect(h.cycle('runs', [finding('shop'), finding('crm')]).decisions).toEqual({ muted_window: 2 });
      await h.notifier.deliverDue();
      expect(receiver.requests).toBe(0);

      h.clock.set('2026-11-03T02:00:00Z');
      expect(h.cycle('runs', [finding('shop')]).decisions).toEqual({ resolved_quietly: 2 });
      await h.notifier.deliverDue();
      expect(receiver.requests).toBe(0);

      // 06:01 in Berlin: the window is over.
      h.clock.set('2026-11-03T05:01:00Z');
      await h.notifier.deliverDue();
      expect(receiver.received).toHaveLength(1);
      const text = payloadText(receiver.received[0]);
      expect(text).toContain('Problem shop');
      expect(text).not.toContain('Problem crm');
    });

    it('outside the window the same route delivers at once', async () => {
      h = Harness.open({
        backend,
        channels: [slackTo('ops', receiver.url)],
        notify: { mute_windows: [night], routes: [{ channels: ['ops'], mute_windows: ['night'], continue: false }] },
      });
      // T0 is 13:00 in Berlin.
      expect(h.clock.now()).toBe(T0);
      expect(h.cycle('runs', [finding('shop')]).decisions).toEqual({ deliver: 1 });
    });
  });

  describe('inhibition', () => {
    const server = (name: string): Finding => ({
      ...finding(`server-${name}`, { check: 'servers' as CheckName, server: name, app: undefined }, 'critical'),
      summary: `Server ${name} is in state error`,
    });
    const appsOn = (serverName: string, n: number) =>
      Array.from({ length: n }, (_, i) => finding(`app-${i}`, { server: serverName, check: 'url_checks' }));

    it('a server in error holds its apps and sends one summary; when it clears, the still-firing apps are delivered and the resolved ones stay quiet', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
      h.cycle('servers', [server('s1')]);
      const pass = h.cycle('urls', [...appsOn('s1', 50), finding('elsewhere', { server: 's2', check: 'url_checks' })]);
      expect(pass).toEqual({ decisions: { inhibited: 50, deliver: 1 }, summaries: 1 });

      await h.notifier.deliverDue();
      // The server alert, the one app on another server, and the summary: not 50 pages.
      const texts = receiver.received.map(payloadText);
      expect(texts).toHaveLength(3);
      expect(texts.filter((t) => t.includes('50 alerts held back: Server s1 is in state error'))).toHaveLength(1);
      expect(texts.filter((t) => t.includes('Server s1 is in state error') && !t.includes('held back'))).toHaveLength(
        1,
      );

      // Ten apps recover while the server is still bad: nothing is said about them.
      h.clock.advance(MINUTE);
      expect(
        h.cycle('urls', [...appsOn('s1', 40), finding('elsewhere', { server: 's2', check: 'url_checks' })]).decisions,
      ).toEqual({
        resolved_quietly: 20,
      });

      // The server recovers: its resolve goes out, and the 40 apps still failing are announced.
      h.clock.advance(MINUTE);
      h.cycle('servers', []);
      receiver.received.length = 0;
      await h.notifier.deliverDue();
      const after = receiver.received.map(payloadText);
      expect(after).toHaveLength(2);
      const apps = after.find((t) => t.includes('Problem app-'));
      expect(apps).toContain('and 30 more');
      expect(after.join()).not.toMatch(/Problem app-4\d/);
      expect(h.rows(`decision = 'deliver' AND fingerprint LIKE 'url_checks/app-%'`)).toHaveLength(40);
      expect(h.rows(`status IN ('pending', 'held')`)).toEqual([]);
    });

    const cannotRead = (source: string): Finding => ({
      ...finding(`source-${source}`, { check: 'watchdog', source, app: undefined }, 'critical'),
      summary: `cannot read ${source}: HTTP 401 invalid token`,
    });

    it('an API outage seen by 4 jobs over 3 cycles is one message per channel: the cause, no summary', async () => {
      h = Harness.open({ backend, channels: [slackTo('ops', receiver.url), slackTo('team', other.url)] });
      const jobs = ['runs', 'urls', 'backups', 'attention'] as const;
      const passes = [];
      for (let cycle = 0; cycle < 3; cycle++) {
        for (const job of jobs) {
          passes.push(h.cycle(job, [cannotRead(job)]));
          await h.notifier.deliverDue();
          h.clock.advance(15 * SECOND);
        }
      }
      expect(passes.reduce((n, p) => n + p.summaries, 0)).toBe(0);
      for (const r of [receiver, other]) {
        expect(r.received.map(payloadText)).toHaveLength(1);
        expect(payloadText(r.received[0])).toContain('cannot read runs');
      }

      // The API is back for everyone: the held ones resolve quietly, the cause's resolve is sent.
      h.clock.advance(MINUTE);
      for (const job of ['urls', 'backups', 'attention', 'runs'] as const) h.cycle(job, []);
      receiver.received.length = 0;
      await h.notifier.deliverDue();
      expect(receiver.received.map(payloadText)).toHaveLength(1);
      expect(payloadText(receiver.received[0])).toContain('cannot read runs');
      expect(h.rows(`status IN ('pending', 'held')`)).toEqual([]);
    });

    it('a bad server seen by 4 jobs over 3 cycles: one server message and one summary per channel, again only after the server is re-announced', async () => {
      h = Harness.open({
        backend,
        channels: [slackTo('ops', receiver.url), slackTo('team', other.url)],
        alerts: { repeat_interval: HOUR },
      });
      const checks: Record<'runs' | 'urls' | 'backups' | 'attention', CheckName> = {
        runs: 'failed_runs',
        urls: 'url_checks',
        backups: 'backups',
        attention: 'attention',
      };
      const appsFor = (job: keyof typeof checks, cycle: number) =>
        Array.from({ length: cycle + 1 }, (_, i) => finding(`${job}-app-${i}`, { server: 's1', check: checks[job] }));
      let summaries = 0;
      for (let cycle = 0; cycle < 3; cycle++) {
        summaries += h.cycle('servers', [server('s1')]).summaries;
        for (const job of Object.keys(checks) as (keyof typeof checks)[]) {
          summaries += h.cycle(job, appsFor(job, cycle)).summaries;
          await h.notifier.deliverDue();
          h.clock.advance(5 * SECOND);
        }
      }
      expect(summaries).toBe(2);
      for (const r of [receiver, other]) {
        const texts = r.received.map(payloadText);
        expect(texts).toHaveLength(2);
        expect(texts.filter((t) => t.includes('Server s1 is in state error') && !t.includes('held back'))).toHaveLength(
          1,
        );
        // The summary counts what was held when it was written (the first job's first app).
        expect(texts.filter((t) => t.includes('1 alert held back: Server s1 is in state error'))).toHaveLength(1);
      }

      // The server alert repeats (an hour on): the channel hears it again, and the next hold
      // brings one fresh summary with everything held on that channel.
      h.clock.advance(HOUR);
      h.cycle('servers', [server('s1')]);
      await h.notifier.deliverDue();
      expect(h.cycle('runs', appsFor('runs', 3)).summaries).toBe(2);
      expect(h.cycle('urls', appsFor('urls', 3)).summaries).toBe(0);
      await h.notifier.deliverDue();
      const latest = receiver.received.map(payloadText).filter((t) => t.includes('held back'));
      expect(latest).toHaveLength(2);
      expect(latest[1]).toContain('13 alerts held back: Server s1 is in state error');

      // Over (what it held is announced), then in error again: a new outage is news again.
      h.clock.advance(MINUTE);
      h.cycle('servers', []);
      await h.notifier.deliverDue();
      h.clock.advance(MINUTE);
      h.cycle('servers', [server('s1')]);
      expect(h.cycle('runs', [...appsFor('runs', 3), finding('new-app', { server: 's1' })]).summaries).toBe(2);
    });
  });

  describe('notices', () => {
    it('go through the outbox to every channel, one message each', async () => {
      h = Harness.open({ backend, channels: [slackTo('a', receiver.url), slackTo('b', other.url)] });
      const ids = h.notifier.notice({
        type: 'notice',
        topic: 'remediation',
        title: 'Retried run #12 of shop',
        severity: 'ok',
      });
      expect(ids).toHaveLength(2);
      await h.notifier.deliverDue();
      expect(payloadText(receiver.received[0])).toContain('Retried run #12 of shop');
      expect(other.received).toHaveLength(1);
    });

    it('refuses to enqueue outside a transaction', () => {
      h = Harness.open({ backend, channels: [slackTo('a', receiver.url)] });
      expect(() => h?.notifier.enqueue([], T0)).toThrow(/must run inside store\.transaction/);
    });
  });
});

describe('the inhibition summary', () => {
  const cause = { rule: 'bad_servers' as const, fingerprint: 'servers/server/1', summary: 'Server s1 is error' };
  it.each<[string, [AlertEvent['kind'], Severity][], string]>([
    [
      'a critical among warnings',
      [
        ['firing', 'warning'],
        ['firing', 'critical'],
        ['repeat', 'warning'],
      ],
      'critical',
    ],
    [
      'warnings only',
      [
        ['firing', 'warning'],
        ['escalated', 'warning'],
      ],
      'warning',
    ],
    [
      'a critical that resolved meanwhile, and a warning',
      [
        ['resolved', 'critical'],
        ['firing', 'warning'],
      ],
      'warning',
    ],
    ['only resolves', [['resolved', 'critical']], 'info'],
  ])('holding %s is %s', (_name, held, severity) => {
    const events = held.map(([kind, s], i) => alertEvent({ id: i + 1, kind, severity: s, fingerprint: `f${i}` }));
    expect(inhibitionSummary(cause, events, 10).severity).toBe(severity);
  });
});

/**
 * "Once when it starts, again only when it matters, once when it is over", from the channel's
 * side: every channel told an alert fires hears that it is over, and hears of it again only when
 * that is news. On SQLite: the decisions are the outbox's, whatever the engine.
 */
const channels = () => [slackTo('ops', receiver.url), slackTo('pager', other.url)];
const texts = (r: WebhookReceiver) => r.received.map((p) => payloadText(p));

describe('told once when it starts, again when it matters, once when it is over', () => {
  it('a resolve and a new firing hidden by a silence are no news: the channel was told it fires', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)] });
    h.cycle('runs', [finding('shop')]);
    createSilence(h.store, {
      matchers: [{ name: 'app', op: '=', value: 'shop' }],
      durationMs: HOUR,
      reason: 'deploying',
      createdBy: 'test',
      now: h.clock.now(),
    });
    for (const seen of [[], [finding('shop')]]) {
      h.clock.advance(MINUTE);
      h.cycle('runs', seen);
      await h.notifier.deliverDue();
    }
    // The silence is over and the alert fires: told once, at its start, and reminded when due.
    h.clock.advance(HOUR);
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    expect(receiver.received).toHaveLength(1);
    h.clock.advance(3 * HOUR);
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    expect(texts(receiver)).toHaveLength(2);
    expect(h.rows("kind = 'firing'").map((r) => r.decision)).toEqual(['deliver', 'repeat_not_due']);
  });

  it('a channel down through two repeat intervals hears of one alert once, not once per repeat', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)] });
    receiver.setMode('fail500');
    for (let hour = 0; hour <= 9; hour++) {
      h.cycle('runs', [finding('shop')]);
      await h.notifier.deliverDue();
      h.clock.advance(HOUR);
    }
    receiver.setMode('ok');
    await h.notifier.deliverDue();

    expect(h.rows().map((r) => `${r.kind}:${r.status}`)).toEqual(['firing:sent', 'repeat:sent', 'repeat:sent']);
    expect(texts(receiver)).toHaveLength(1);
    expect(texts(receiver)[0]).toContain('WARNING · 1 failed run · shop · production');
  });

  it('an alert that recovers under a bad server sends no "held back" summary; its end is told when the cause clears', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)] });
    const app = finding('shop', { server: 's1' });
    h.cycle('runs', [app]);
    h.clock.advance(MINUTE);
    h.cycle('servers', [finding('s1', { check: 'servers', server: 's1', app: undefined })]);
    await h.notifier.deliverDue();
    h.clock.advance(MINUTE);
    expect(h.cycle('runs', [])).toEqual({ decisions: { inhibited: 1 }, summaries: 0 });
    await h.notifier.deliverDue();
    expect(texts(receiver).filter((t) => t.includes('held back'))).toEqual([]);

    h.clock.advance(MINUTE);
    h.cycle('servers', []);
    await h.notifier.deliverDue();
    expect(texts(receiver).map((t) => /RESOLVED.*Problem (\w+)/.exec(t)?.[1] ?? 'firing')).toEqual([
      'firing',
      'firing',
      'shop',
      's1',
    ]);
  });

  it('a channel paged at critical hears the resolve after the severity fell below its min_severity', async () => {
    h = Harness.open({
      channels: channels(),
      notify: {
        routes: [
          { name: 'page', min_severity: 'critical', channels: ['pager'], continue: true },
          { name: 'all', channels: ['ops'], continue: false },
        ],
      },
    });
    h.cycle('runs', [finding('shop', {}, 'critical')]);
    await h.notifier.deliverDue();
    h.clock.advance(MINUTE);
    h.cycle('runs', [finding('shop', {}, 'warning')]);
    await h.notifier.deliverDue();
    h.clock.advance(MINUTE);
    h.cycle('runs', []);
    await h.notifier.deliverDue();

    expect(texts(other)).toHaveLength(2);
    expect(texts(other)[0]).toContain('CRITICAL');
    expect(texts(other)[1]).toContain('RESOLVED');
    expect(texts(receiver).map((t) => t.includes('RESOLVED'))).toEqual([false, true]);
  });

  it('a channel a reload took off the route still hears the end of what it was told fires', async () => {
    const routed = (to: string[]) => ({
      routes: [{ name: 'shop', match: { app: 'shop' }, channels: to, continue: false }],
    });
    h = Harness.open({ channels: channels(), notify: routed(['ops', 'pager']) });
    h.cycle('runs', [finding('shop')]);
    await h.notifier.deliverDue();
    const before = h;
    h = undefined;
    await before.close({ keepDir: true });
    h = Harness.open({
      channels: channels(),
      notify: routed(['ops']),
      dir: before.dir,
      state: before.state,
      clock: before.clock,
    });
    h.clock.advance(MINUTE);
    h.cycle('runs', []);
    await h.notifier.deliverDue();

    expect(texts(other).map((t) => t.includes('RESOLVED'))).toEqual([false, true]);
    expect(texts(receiver).map((t) => t.includes('RESOLVED'))).toEqual([false, true]);
  });

  it('the resolve keeps the send_resolved of the route that took the alert there', async () => {
    h = Harness.open({
      channels: channels(),
      notify: {
        routes: [
          { name: 'page', min_severity: 'critical', channels: ['pager'], send_resolved: false, continue: true },
          { name: 'all', channels: ['ops'], continue: false },
        ],
      },
    });
    h.cycle('runs', [finding('shop', {}, 'critical')]);
    h.clock.advance(MINUTE);
    h.cycle('runs', [finding('shop', {}, 'warning')]);
    h.clock.advance(MINUTE);
    h.cycle('runs', []);
    await h.notifier.deliverDue();

    expect(h.rows("kind = 'resolved'").map((r) => `${r.channel}:${r.decision}`)).toEqual([
      'ops:deliver',
      'pager:resolved_not_sent',
    ]);
  });
});
