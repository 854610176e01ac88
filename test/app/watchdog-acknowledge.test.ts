/**
 * Acknowledgement end to end: the daemon reads a failed update from the simulator and mails it to
 * a real SMTP server; it repeats every hour; `deploy-watchdog ack` (the real command, on the same
 * state file, as a shell beside the daemon runs it) stops the repeats, and the mail channel is not
 * told of the acknowledgement itself; when the run succeeds the resolution is still mailed, and
 * says whose acknowledgement it ended. The acknowledged-alerts gauge follows.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertId } from '../../src/alerts/alert-id.js';
import { eventsOfAlert, alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { Metrics } from '../../src/lib/metrics.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { engineConfig, engineHarness, MINUTE, openWatchdog } from './fixtures.js';

const HOUR = 60 * MINUTE;
const engine = engineHarness();
let sink: SmtpSink;
let wd: Watchdog | undefined;

beforeEach(async () => {
  sink = await startSmtpSink();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await sink.close();
});

/** One cycle of the runs job, then one delivery round: what a minute of the daemon does. */
async function minute(): Promise<void> {
  await wd!.runOnce(['runs']);
  await wd!.deliverDue();
}

describe('an acknowledged alert, end to end', () => {
  it('stops repeating by mail once acknowledged with the CLI, and its resolution is still mailed', async () => {
    const notify = [
      'notify:',
      '  channels:',
      `    - { name: mail, type: email, smtp: { host: 127.0.0.1, port: ${sink.port}, secure: none }, from: dw@example.com, to: [ops@example.com] }`,
      '  routes: [{ channels: [mail] }]',
    ].join('\n');
    const metrics = new Metrics({ processMetrics: false });
    const config = engineConfig(engine.sim, engine.dir, 'alerts: { repeat_interval: 1h }', undefined, notify);
    wd = openWatchdog(config, engine.clock, { metrics });
    const run = engine.sim.control.addRun({
      appId: 3,
      action: 'update',
      state: 'error',
      failedStep: 'build_image',
      reason: 'pip install failed',
    });
    const fingerprint = `failed_runs/run/${run.id}`;

    await minute();
    engine.clock.advance(HOUR);
    await minute();
    expect(sink.messages).toHaveLength(2);

    // A person beside the daemon, with the daemon's config file (its state file) and no secrets.
    const cliConfig = writeConfig(engine.dir, [
      'api: { base_url: "http://127.0.0.1:9", token: "${DMS_API_TOKEN}" }',
      'state: { path: ./state.db }',
    ]);
    const acked = await runCli(
      ['ack', '--config', cliConfig, alertId(fingerprint), '--comment', 'rebuilding the image'],
      { env: { USER: 'ops-alice' } },
    );
    expect(acked.code, acked.stderr).toBe(0);

    for (let i = 0; i < 4; i++) {
      engine.clock.advance(HOUR);
      await minute();
    }
    expect(sink.messages).toHaveLength(2);
    expect(eventsOfAlert(wd.store, fingerprint).map((e) => e.kind)).toEqual(['firing', 'repeat', 'acknowledged']);
    const ackRows = wd.store.db
      .prepare(`SELECT channel, decision FROM outbox WHERE fingerprint = ? AND kind = 'acknowledged'`)
      .all(fingerprint);
    expect(ackRows).toEqual([{ channel: 'mail', decision: 'acknowledgement_not_sent' }]);
    const gauge = new RegExp(`deploy_watchdog_acknowledged_alerts\\{check="failed_runs",severity="\\w+"\\} 1`);
    expect(await metrics.render()).toMatch(gauge);

    engine.sim.control.setRunState(run.id, { state: 'done' });
    engine.clock.advance(MINUTE);
    await minute();
    expect(sink.messages).toHaveLength(3);
    expect(sink.messages[2]?.subject).toMatch(/RESOLVED/);
    expect(alertStoreOf(wd.store).get(fingerprint)).toMatchObject({ status: 'resolved', acknowledgement: null });
    expect(eventsOfAlert(wd.store, fingerprint).at(-1)).toMatchObject({
      kind: 'resolved',
      acknowledgementCleared: { by: 'ops-alice', via: 'cli', comment: 'rebuilding the image' },
    });
    expect(await metrics.render()).not.toMatch(gauge);
  });
});
