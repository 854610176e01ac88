/**
 * Links and next steps as delivered: a failed run on the simulator, read by the daemon, reaches a
 * Slack stand-in and a real SMTP server with its run's page (the id filled in), the route's and
 * the check's runbooks, its next step and the silence line, and the email names the app in its
 * subject and says it was written by a program.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { engineConfig, manualSim, openWatchdog, tempDir } from '../app/fixtures.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
let slack: WebhookReceiver;
let mail: SmtpSink;
let wd: Watchdog | undefined;

beforeEach(async () => {
  ({ sim, clock } = await manualSim());
  tmp = tempDir();
  slack = await startWebhookReceiver();
  mail = await startSmtpSink();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await slack.close();
  await mail.close();
  await sim.close();
  tmp.cleanup();
});

const NOTIFY = (slackUrl: string, smtpPort: number) => `notify:
  links:
    run: "https://manage.example.com/runs/{id}"
    app: "https://manage.example.com/apps/{id}"
  channels:
    - { name: slack, type: slack, webhook_url: "${slackUrl}" }
    - { name: mail, type: email, smtp: { host: 127.0.0.1, port: ${smtpPort}, secure: none }, from: watchdog@example.com, to: [ops@example.com] }
  routes:
    - name: prod-oncall
      match: { environment_type: production }
      channels: [slack, mail]
      runbook_url: https://wiki.example.com/oncall/production
    - { channels: [slack] }`;

describe('links and next steps, delivered', () => {
  it('a failed run in production: its page, both runbooks and its next step, in Slack and by email', async () => {
    const app = [...sim.control.state.apps.values()].find((a) => a.envType === 'production' && a.deployedAt !== null)!;
    const run = sim.control.addRun({ appId: app.id, action: 'update', state: 'error', reason: 'pip install failed' });
    const config = engineConfig(
      sim,
      tmp.dir,
      'checks:\n  failed_runs: { runbook_url: "https://wiki.example.com/runbooks/failed-runs" }',
      sim.adminToken,
      NOTIFY(slack.url, mail.port),
    );
    wd = openWatchdog(config, clock);
    expect((await wd.runOnce(['runs'])).complete).toBe(true);
    await wd.deliverDue();

    const page = `https://manage.example.com/runs/${run.id}`;
    const payload = slack.received.find((p) => JSON.stringify(p).includes(page));
    expect(payload, 'a Slack message links the run').toBeDefined();
    const buttons = (payload?.blocks ?? []).flatMap((b) =>
      b.type === 'actions' ? (b.elements as unknown as { text: { text: string }; url: string }[]) : [],
    );
    expect(buttons.map((b) => [b.text.text, b.url])).toEqual(
      expect.arrayContaining([
        ['Run page', page],
        ['Runbook: prod-oncall', 'https://wiki.example.com/oncall/production'],
        ['Runbook: failed runs', 'https://wiki.example.com/runbooks/failed-runs'],
      ]),
    );
    const texts = JSON.stringify(payload);
    expect(texts).toContain("*Next step:* Read the failed step's log, fix the cause, then retry the run.");
    expect(texts).toContain('To silence: `deploy-watchdog silence --match check=failed_runs');

    const email = mail.messages.find((m) => (m.html ?? '').includes(page));
    expect(email, 'an email links the run').toBeDefined();
    expect(email?.subject).toContain(`· ${app.name} (production)`);
    expect(email?.headers).toContainEqual(['Auto-Submitted', 'auto-generated']);
    expect(email?.html).toContain(`<a href="${page}">`);
    expect(email?.html).toContain('<a href="https://wiki.example.com/oncall/production">Runbook: prod-oncall</a>');
    expect(email?.text).toContain("Next step: Read the failed step's log, fix the cause, then retry the run.");
  });
});
