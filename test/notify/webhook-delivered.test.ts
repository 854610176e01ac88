/**
 * The webhook channel driven end to end: the daemon reads the simulator and posts to a receiver
 * built for Alertmanager on loopback, which refuses anything Alertmanager would not send. A
 * certificate expiring, then renewed, is one group from firing to resolved; max_alerts cuts and
 * counts; a 503 with Retry-After is waited out through the outbox; a 400 is kept and said with its
 * reason; and neither the URL's tokens nor the bearer token are ever in the state file or the log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { captureLogger, engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';
import {
  startAlertmanagerReceiver,
  ZERO_TIME,
  type AlertmanagerPayload,
  type AlertmanagerReceiver,
} from './alertmanager-receiver.js';

const TOKEN = `tok-${randomBytes(8).toString('hex')}`;
const GROUP = { check: 'certificates', environment_type: 'production' };

let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
let hook: AlertmanagerReceiver;
let logs: ReturnType<typeof captureLogger>;
let wd: Watchdog | undefined;

beforeEach(async () => {
  ({ sim, clock } = await manualSim({ apps: 30 }));
  tmp = tempDir();
  hook = await startAlertmanagerReceiver();
  logs = captureLogger('debug');
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await hook.close();
  await sim.close();
  tmp.cleanup();
});

/** A watchdog whose one channel is the webhook, its URL and token from the environment. */
function open(maxAlerts = 0): Watchdog {
  const notify = `notify:
  channels:
    - name: oncall
      type: webhook
      url: "\${ONCALL_URL}"
      bearer_token: "\${ONCALL_TOKEN}"
      external_url: https://watchdog.example.com
      max_alerts: ${maxAlerts}
  routes: [{ channels: [oncall] }]
  delivery: { initial_backoff: 10s, max_backoff: 1h }`;
  const config = engineConfig(sim, tmp.dir, 'jobs: { jitter: 0s }', sim.adminToken, notify, '{ listen: "off" }', {
    ONCALL_URL: hook.url,
    ONCALL_TOKEN: TOKEN,
  });
  wd = openWatchdog(config, clock, { logger: logs.logger });
  return wd;
}

/** Production apps with a URL, as many as asked. */
function productionApps(n: number) {
  const apps = [...sim.control.state.apps.values()].filter(
    (a) => a.envType === 'production' && a.deployedAt !== null && a.urlIds.length > 0,
  );
  expect(apps.length).toBeGreaterThanOrEqual(n);
  return apps.slice(0, n);
}

/**
 * Renews every certificate of the seed, so the certificates group holds only what a test makes (a
 * payload carries its group's every alert still firing).
 */
function renewEveryCertificate(): void {
  for (const [id, url] of sim.control.state.urls)
    if (url.sslExpiresAt !== null) sim.control.checks.certificates.renew(id);
}

/** The payloads of the certificates group in production, oldest first. */
function certificatePayloads(): AlertmanagerPayload[] {
  return hook.received
    .map((r) => r.payload)
    .filter((p) => p.groupLabels.check === GROUP.check && p.groupLabels.environment_type === GROUP.environment_type);
}

/** The outbox rows of the webhook, as the state file has them. */
function rows(): { status: string; last_error: string | null; next_attempt_at: number | null }[] {
  return wd!.store.db
    .prepare(`SELECT status, last_error, next_attempt_at FROM outbox WHERE channel = 'oncall' ORDER BY id`)
    .all() as { status: string; last_error: string | null; next_attempt_at: number | null }[];
}

/**
 * Where a secret shows (the URL's tokens, the bearer token), by place: every file of the state and
 * the log. Named places only, so a failure prints no secret.
 */
function leaks(): string[] {
  const places: [string, string][] = fs
    .readdirSync(tmp.dir)
    .map((f) => [f, fs.readFileSync(path.join(tmp.dir, f)).toString('latin1')]);
  places.push(['log', logs.text()]);
  const secrets = [...hook.secrets, TOKEN];
  return places.flatMap(([place, text]) =>
    secrets.filter((s) => text.includes(s)).map((_, i) => `${place}: secret ${i}`),
  );
}

describe('the webhook channel, end to end', () => {
  it('posts a certificate expiring, then renewed, as one Alertmanager group from firing to resolved', async () => {
    renewEveryCertificate();
    const [app] = productionApps(1);
    sim.control.checks.certificates.expire(app!.urlIds[0]!, { inDays: 2 });
    const w = open();
    expect((await w.runOnce(['urls'])).complete).toBe(true);
    await w.deliverDue();

    const fired = certificatePayloads().find((p) => p.alerts.some((a) => a.labels.app === app!.name));
    expect(fired, 'a payload about the certificate').toBeDefined();
    const alert = fired!.alerts.find((a) => a.labels.app === app!.name)!;
    expect(fired).toMatchObject({
      version: '4',
      receiver: 'oncall',
      status: 'firing',
      groupLabels: GROUP,
      groupKey: '{}/{channel="oncall"}:{check="certificates", environment_type="production"}',
      externalURL: 'https://watchdog.example.com',
      truncatedAlerts: 0,
    });
    expect(alert).toMatchObject({
      status: 'firing',
      endsAt: ZERO_TIME,
      labels: { alertname: 'certificates', check: 'certificates', environment_type: 'production' },
      annotations: { summary: expect.stringContaining(app!.name) },
    });
    expect(hook.received[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);

    clock.advance(MINUTE);
    sim.control.checks.certificates.renew(app!.urlIds[0]!);
    expect((await w.runOnce(['urls'])).complete).toBe(true);
    await w.deliverDue();

    const over = certificatePayloads().at(-1)!;
    expect(over).toMatchObject({ status: 'resolved', groupKey: fired!.groupKey, groupLabels: GROUP });
    expect(over.alerts).toEqual([
      expect.objectContaining({ status: 'resolved', fingerprint: alert.fingerprint, startsAt: alert.startsAt }),
    ]);
    expect(Date.parse(over.alerts[0]!.endsAt)).toBe(clock.now());
    // Every request was a payload Alertmanager could have sent (the receiver answers 400 otherwise).
    expect(hook.invalid).toEqual([]);
    expect(rows().map((r) => r.status)).not.toContain('pending');
    expect(leaks()).toEqual([]);
  });

  it('sends the group whole: one alert resolving while another fires is a firing payload carrying both', async () => {
    renewEveryCertificate();
    const [a, b] = productionApps(2);
    for (const app of [a!, b!]) sim.control.checks.certificates.expire(app.urlIds[0]!, { inDays: 2 });
    const w = open();
    await w.runOnce(['urls']);
    await w.deliverDue();
    const fingerprintOf = (name: string) =>
      certificatePayloads()
        .flatMap((p) => p.alerts)
        .find((x) => x.labels.app === name)!.fingerprint;
    const [fa, fb] = [fingerprintOf(a!.name), fingerprintOf(b!.name)];

    clock.advance(MINUTE);
    sim.control.checks.certificates.renew(a!.urlIds[0]!);
    await w.runOnce(['urls']);
    await w.deliverDue();
    const partial = certificatePayloads().at(-1)!;
    // Alertmanager's receivers close the group's incident on `resolved`: b still fires, so it does not.
    expect(partial.status).toBe('firing');
    expect(partial.alerts.map((x) => [x.fingerprint, x.status])).toEqual([
      [fa, 'resolved'],
      [fb, 'firing'],
    ]);
    expect(partial.alerts[1]?.endsAt).toBe(ZERO_TIME);

    clock.advance(MINUTE);
    sim.control.checks.certificates.renew(b!.urlIds[0]!);
    await w.runOnce(['urls']);
    await w.deliverDue();
    const over = certificatePayloads().at(-1)!;
    expect(over.status).toBe('resolved');
    expect(over.alerts.map((x) => [x.fingerprint, x.status])).toEqual([[fb, 'resolved']]);
    expect(hook.invalid).toEqual([]);
  });

  it('cuts a group to max_alerts and counts the rest in truncatedAlerts', async () => {
    for (const app of productionApps(3)) sim.control.checks.certificates.expire(app.urlIds[0]!, { inDays: 2 });
    const w = open(2);
    await w.runOnce(['urls']);
    await w.deliverDue();

    const [payload] = certificatePayloads();
    const sent = (
      w.store.db
        .prepare(`SELECT COUNT(*) AS n FROM outbox WHERE channel = 'oncall' AND group_key = ? AND status = 'sent'`)
        .get(JSON.stringify(GROUP)) as { n: number }
    ).n;
    expect(sent).toBeGreaterThanOrEqual(3);
    expect(payload?.alerts).toHaveLength(2);
    expect(payload?.truncatedAlerts).toBe(sent - 2);
    expect(hook.invalid).toEqual([]);
  });

  it("waits out a 503's Retry-After in the outbox, then delivers once", async () => {
    const [app] = productionApps(1);
    sim.control.checks.certificates.expire(app!.urlIds[0]!, { inDays: 2 });
    const w = open();
    await w.runOnce(['urls']);
    hook.answer({ status: 503, headers: { 'retry-after': '120' }, body: 'maintenance' });
    const failedAt = clock.now();
    expect(await w.deliverDue()).toMatchObject({ sent: 0, retried: 1 });
    const waiting = rows().filter((r) => r.status === 'pending');
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting[0]).toMatchObject({
      last_error: 'server error (HTTP 503): maintenance',
      next_attempt_at: failedAt + 120_000,
    });

    hook.answer('ok');
    const asked = hook.requests;
    // Well past the 10s backoff the channel would take on its own: the receiver's 120s rules.
    clock.advance(119_000);
    expect(await w.deliverDue()).toMatchObject({ sent: 0, retried: 0 });
    expect(hook.requests).toBe(asked);
    clock.advance(1_000);
    const report = await w.deliverDue();
    expect(report.sent).toBeGreaterThan(0);
    expect(rows().map((r) => r.status)).not.toContain('pending');
    expect(certificatePayloads().filter((p) => p.alerts.some((a) => a.labels.app === app!.name))).toHaveLength(1);
    expect(leaks()).toEqual([]);
  });

  it('keeps a notification the receiver refuses (400) and says why, without the URL it echoed', async () => {
    const [app] = productionApps(1);
    sim.control.checks.certificates.expire(app!.urlIds[0]!, { inDays: 2 });
    const w = open();
    await w.runOnce(['urls']);
    hook.answer({ status: 400, body: `unknown integration key at ${hook.url} (Bearer ${TOKEN})` });
    const at = clock.now();
    const report = await w.deliverDue();
    expect(report.sent).toBe(0);
    expect(report.failed).toBeGreaterThan(0);

    const reason = 'rejected (HTTP 400): unknown integration key at <secret> (Bearer <secret>)';
    // Every message kept, and tried again slowly (max_backoff) in case the receiver is fixed; a
    // permanent refusal does not pause the channel, so each was tried.
    const kept = rows();
    expect(kept.length).toBeGreaterThan(0);
    expect(new Set(kept.map((r) => JSON.stringify(r)))).toEqual(
      new Set([JSON.stringify({ status: 'pending', last_error: reason, next_attempt_at: at + 60 * MINUTE })]),
    );
    const said = logs.lines().find((l) => String(l.msg).startsWith('delivery rejected permanently'));
    expect(said).toMatchObject({ channel: 'oncall', reason });
    expect(leaks()).toEqual([]);
  });
});
