/**
 * Escalation end to end: the daemon reads a failed update from the simulator and posts it to the
 * team's Slack webhook; nobody acknowledges it, so 15 minutes after it fired its route's
 * `escalate_after` sends it to the on-call mailbox (a real SMTP server) too, once, naming the
 * Slack channel told before; a restart of the daemon does not send it again, and when the run
 * succeeds the on-call mailbox is told it is over. An alert acknowledged with the real `ack`
 * command before its time is never escalated.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertId } from '../../src/alerts/alert-id.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { engineConfig, engineHarness, MINUTE, openWatchdog } from './fixtures.js';

const engine = engineHarness();
let sink: SmtpSink;
let receiver: WebhookReceiver;
let wd: Watchdog | undefined;

beforeEach(async () => {
  sink = await startSmtpSink();
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await sink.close();
  await receiver.close();
});

function open(): Watchdog {
  const notify = [
    'notify:',
    '  channels:',
    `    - { name: team, type: slack, webhook_url: "${receiver.url}" }`,
    `    - { name: oncall, type: email, smtp: { host: 127.0.0.1, port: ${sink.port}, secure: none }, from: dw@example.com, to: [oncall@example.com] }`,
    '  routes: [{ channels: [team], escalate_after: 15m, escalate_to: [oncall] }]',
  ].join('\n');
  return openWatchdog(engineConfig(engine.sim, engine.dir, '', undefined, notify), engine.clock);
}

/** `minutes` of the daemon: a runs cycle and a delivery round each minute. */
async function minutes(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    engine.clock.advance(MINUTE);
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
  }
}

function failedUpdate(): string {
  const run = engine.sim.control.addRun({
    appId: 3,
    action: 'update',
    state: 'error',
    failedStep: 'build_image',
    reason: 'pip install failed',
  });
  return String(run.id);
}

describe('escalation, end to end', () => {
  it('mails on-call once when nobody acknowledged the alert in 15 minutes, and says when it is over', async () => {
    wd = open();
    const runId = failedUpdate();
    await minutes(1);
    expect(receiver.received).toHaveLength(1);

    await minutes(13);
    expect(sink.messages).toHaveLength(0);
    await minutes(2);
    expect(sink.messages).toHaveLength(1);
    expect(sink.messages[0]?.to).toContain('oncall@example.com');
    expect(sink.messages[0]?.text).toContain('unacknowledged for 15m, escalated (told before: team)');

    // A restart between rounds sends nothing again.
    await wd.stop(1_000);
    wd = open();
    await minutes(20);
    expect(sink.messages).toHaveLength(1);

    engine.sim.control.setRunState(Number(runId), { state: 'done' });
    await minutes(1);
    expect(sink.messages).toHaveLength(2);
    expect(sink.messages[1]?.subject).toMatch(/RESOLVED/);
  });

  it('never mails on-call for an alert acknowledged with `ack` in time', async () => {
    wd = open();
    const runId = failedUpdate();
    await minutes(5);
    const cliConfig = writeConfig(engine.dir, [
      'api: { base_url: "http://127.0.0.1:9", token: "${DMS_API_TOKEN}" }',
      'state: { path: ./state.db }',
    ]);
    const acked = await runCli(['ack', '--config', cliConfig, alertId(`failed_runs/run/${runId}`)], {
      env: { USER: 'ops-alice' },
    });
    expect(acked.code, acked.stderr).toBe(0);
    await minutes(30);
    expect(receiver.received).toHaveLength(1);
    expect(sink.messages).toHaveLength(0);
  });
});
