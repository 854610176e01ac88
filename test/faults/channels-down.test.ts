/**
 * Slack and SMTP down for several cycles while alerts keep coming, then back: everything is
 * delivered, once. Two watchdogs watch the same simulator on the same clock: one whose channels
 * fail (500, 429, hanging, SMTP 451) during the outage, and a control whose channels never fail.
 * After the outage the first has left nothing waiting and ended every row as the control did
 * (nothing lost), its peers accepted exactly the messages it recorded as sent (nothing doubled),
 * and every event's app is named on both channels.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkMode } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookMode, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  advancing,
  eventSubjects,
  faultConfig,
  manualSim,
  MINUTE,
  openWatchdog,
  recordedMessages,
  tempDir,
} from './fault-fixture.js';

/** Cycles run while the channels are down. */
const OUTAGE_CYCLES = 4;

interface Peers {
  slack: WebhookReceiver;
  mail: SmtpSink;
}

let sim: RunningSimulator;
let clock: ManualClock;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  ({ sim, clock } = await manualSim({ apps: 30, seed: 11 }));
  cleanups.push(() => sim.close());
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function peers(): Promise<Peers> {
  const slack = await startWebhookReceiver({ retryAfterSeconds: 30 });
  const mail = await startSmtpSink();
  cleanups.push(
    () => slack.close(),
    () => mail.close(),
  );
  return { slack, mail };
}

function watchdogFor(p: Peers): Watchdog {
  const tmp = tempDir();
  const notify = `notify:
  channels:
    - { name: slack, type: slack, webhook_url: "${p.slack.url}" }
    - { name: mail, type: email, smtp: { host: 127.0.0.1, port: ${p.mail.port}, secure: none }, from: watchdog@example.com, to: [ops@example.com] }
  routes: [{ channels: [slack, mail] }]
  max_items_per_message: 100
  delivery: { initial_backoff: 10s, max_backoff: 1m, timeout: 2s }`;
  const wd = openWatchdog(
    faultConfig(sim, tmp.dir, { notify, extra: 'jobs: { jitter: 0s, maintenance: "off" }' }),
    clock,
  );
  cleanups.push(async () => {
    await wd.stop(500);
    tmp.cleanup();
  });
  return wd;
}

/** A few changes per cycle: new failures and expiring certificates, and announced ones fixed. */
function change(cycle: number): void {
  const c = sim.control;
  const apps = [...c.state.apps.values()].filter(
    (a) => a.deployedAt !== null && a.state === 'running' && a.urlIds.length > 0,
  );
  const app = apps[cycle % apps.length]!;
  c.addRun({ appId: app.id, action: 'restart', state: 'error' });
  c.checks.certificates.expire(app.urlIds[0]!, { inDays: 2 });
  if (cycle >= 2) c.checks.certificates.renew(apps[(cycle - 2) % apps.length]!.urlIds[0]!);
}

describe.each([
  { slackMode: 'fail500' as WebhookMode, mailMode: 'tempfail-rcpt' as SmtpSinkMode },
  { slackMode: 'rateLimit' as WebhookMode, mailMode: 'tempfail-data' as SmtpSinkMode },
  { slackMode: 'hang' as WebhookMode, mailMode: 'tempfail-rcpt' as SmtpSinkMode },
])('Slack answering $slackMode and SMTP $mailMode for several cycles', ({ slackMode, mailMode }) => {
  it('delivers every event once when they are back, exactly what a never-failing watchdog delivered', async () => {
    const down = await peers();
    const up = await peers();
    const wdDown = watchdogFor(down);
    const wdUp = watchdogFor(up);
    const cycle = async () => {
      await wdDown.runOnce();
      await wdUp.runOnce();
      // A hanging send ends at the delivery timeout, which runs on the shared clock.
      await advancing(clock, wdDown.deliverDue(), 100, 10);
      await wdUp.deliverDue();
    };

    await cycle();
    expect(down.slack.received.length).toBeGreaterThan(0);

    down.slack.setMode(slackMode);
    down.mail.setMode(mailMode);
    const acceptedBefore = { slack: down.slack.received.length, mail: down.mail.messages.length };
    for (let i = 1; i <= OUTAGE_CYCLES; i++) {
      change(i);
      clock.advance(MINUTE);
      await cycle();
    }
    // Nothing got through, and the attempts were made (the failure is real, not a skipped send).
    expect(down.slack.received.length).toBe(acceptedBefore.slack);
    expect(down.mail.messages.length).toBe(acceptedBefore.mail);
    expect(down.slack.requests).toBeGreaterThan(acceptedBefore.slack);
    const waiting = () =>
      (wdDown.store.db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE status = 'pending'`).get() as { n: number }).n;
    expect(waiting()).toBeGreaterThan(0);

    down.slack.setMode('ok');
    down.mail.setMode('ok');
    for (let round = 0; round < 20 && waiting() > 0; round++) {
      clock.advance(MINUTE);
      await advancing(clock, wdDown.deliverDue(), 100, 10);
    }
    expect(waiting()).toBe(0);
    expect(
      wdDown.store.db.prepare(`SELECT status, COUNT(*) AS n FROM outbox GROUP BY status ORDER BY status`).all(),
    ).toEqual(wdUp.store.db.prepare(`SELECT status, COUNT(*) AS n FROM outbox GROUP BY status ORDER BY status`).all());

    // Once each: the peers accepted exactly the messages the notifier recorded as delivered (a
    // message sent again would be one more than recorded), no fewer (none recorded but lost).
    const db = wdDown.store.db;
    expect(down.slack.received.length).toBe(recordedMessages(db, 'slack'));
    expect(down.mail.messages.length).toBe(recordedMessages(db, 'mail'));
    expect(down.slack.received.length).toBeGreaterThan(acceptedBefore.slack);
    // Every event of the outage reached both channels: its app (or server) is named in a message.
    const slackText = down.slack.received.map((p) => JSON.stringify(p)).join('\n');
    const mailText = down.mail.messages.map((m) => m.text ?? '').join('\n');
    const subjects = eventSubjects(db).filter((e) => e.subject !== null);
    expect(subjects.length).toBeGreaterThan(OUTAGE_CYCLES);
    for (const e of subjects) {
      expect(slackText, `event ${e.id} (${e.kind}) of ${e.subject} on Slack`).toContain(e.subject!);
      expect(mailText, `event ${e.id} (${e.kind}) of ${e.subject} by mail`).toContain(e.subject!);
    }
    // Two watchdogs through a dozen cycles and an outage (7 s quiet): a loaded machine needs the room.
  }, 120_000);
});
