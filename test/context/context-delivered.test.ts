/**
 * An alert's context as delivered: failed runs on the simulator, read by the daemon over HTTP, reach
 * a Slack stand-in and a real SMTP server with the lines of the run's log and its restore point;
 * what cannot be read is said once and the alert goes all the same; the message waits for its
 * context no longer than `notify.context.wait`; repeats and resolves cost no request; the log's
 * text, however hostile, is shown as data.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../src/api/schemas.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { healEstate } from '../../packages/simulator/src/demo/heal-estate.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator, SimulatorOptions } from '../../packages/simulator/src/index.js';
import type { AppRec } from '../../packages/simulator/src/sim-state.js';
import { PLANS_WITH_LOGS } from '../../packages/simulator/src/vocabulary.js';
import { captureLogger, engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';
import { advancing } from '../faults/fault-fixture.js';
import { apiPost } from '../helpers/simulator.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type SlackLikePayload, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
let slack: WebhookReceiver;
let mail: SmtpSink;
let wd: Watchdog | undefined;
let logs: ReturnType<typeof captureLogger>;

/** A no-view_logs token: every read but the logs. */
const NO_LOGS_TOKEN = 'no-logs-token-0123456789';

async function setUp(options: SimulatorOptions = {}): Promise<void> {
  ({ sim, clock } = await manualSim(options));
  healEstate(sim.control);
  sim.control.resetRequests();
}

beforeEach(async () => {
  tmp = tempDir();
  slack = await startWebhookReceiver();
  mail = await startSmtpSink();
  logs = captureLogger('debug');
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await slack.close();
  await mail.close();
  await sim?.close();
  tmp.cleanup();
});

const NOTIFY = () => `notify:
  channels:
    - { name: slack, type: slack, webhook_url: "${slack.url}" }
    - { name: mail, type: email, smtp: { host: 127.0.0.1, port: ${mail.port}, secure: none }, from: watchdog@example.com, to: [ops@example.com] }
  routes: [{ channels: [slack, mail] }]
  context: { wait: 30s }`;

/** A watchdog on the runs job only, delivering to the Slack stand-in and the SMTP sink. */
function watchdog(extra = '', token = sim.adminToken): Watchdog {
  const jobs = 'jobs: { attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off" }';
  wd = openWatchdog(engineConfig(sim, tmp.dir, `${jobs}\n${extra}`, token, NOTIFY()), clock, { logger: logs.logger });
  return wd;
}

/** A running app in `env` whose project's plan has logs (or not), with no upgrade in the way. */
function app(env: 'production' | 'staging', withLogs = true, skip: readonly number[] = []): AppRec {
  const state = sim.control.state;
  const found = [...state.apps.values()].find(
    (a) =>
      a.envType === env &&
      a.state === 'running' &&
      a.deployedAt !== null &&
      a.upgrade === null &&
      !skip.includes(a.id) &&
      PLANS_WITH_LOGS.includes(state.projectOf(a).plan) === withLogs,
  );
  if (!found) throw new Error(`no ${env} app ${withLogs ? 'with' : 'without'} logs in the seed`);
  return found;
}

/** An update of `a`, backed up first, that fails at its check step; the clock is moved past its end. */
async function failedUpdate(a: AppRec, reason: string): Promise<number> {
  sim.control.failNextRun({ appId: a.id, action: 'update', step: 'build_image', reason });
  const answer = await apiPost(sim, `/apps/${a.id}/update`, { backup: true });
  expect(answer.status).toBe(200);
  clock.advance(15 * MINUTE);
  return answer.body.data.run_id as number;
}

/** The requests of one function about one app. */
function requests(fn: string, appId: number): number {
  return sim.control.requests().filter((r) => r.fn === fn && r.path.includes(`/apps/${appId}/`)).length;
}

/** The Slack payloads and emails that mention `text`. */
function delivered(text: string): { slack: SlackLikePayload[]; mail: SinkMessage[] } {
  return {
    slack: slack.received.filter((p) => JSON.stringify(p).includes(text)),
    mail: mail.messages.filter((m) => (m.text ?? '').includes(text)),
  };
}

/** The mrkdwn of every section of a payload. */
const sections = (p: SlackLikePayload | undefined) =>
  (p?.blocks ?? []).filter((b) => b.type === 'section').map((b) => b.text?.text ?? '');

/** The outbox decisions of an alert's rows, by channel. */
function decisions(fingerprint: string): string[] {
  return (
    wd!.store.db
      .prepare('SELECT channel, decision, status FROM outbox WHERE fingerprint = ? ORDER BY id')
      .all(fingerprint) as { channel: string; decision: string; status: string }[]
  ).map((r) => `${r.channel} ${r.decision} ${r.status}`);
}

describe('the context of a failed run, delivered', () => {
  it('a failed update in production: its log lines and its restore point, in Slack and by email', async () => {
    await setUp();
    const shop = app('production');
    const runId = await failedUpdate(shop, 'pip install failed: no matching distribution for lxml==4.6.1');
    watchdog();
    expect((await wd!.runOnce(['runs'])).complete).toBe(true);
    // The cycle only asked: no request of its own, the ask and the held messages in its transaction.
    expect(requests('logs.tail', shop.id) + requests('restore_points.list', shop.id)).toBe(0);
    expect(wd!.store.db.prepare('SELECT subject, status FROM alert_context').all()).toEqual([
      { subject: `run/${runId}`, status: 'pending' },
    ]);
    expect(decisions(`failed_runs/run/${runId}`)).toEqual([
      'slack awaiting_context held',
      'mail awaiting_context held',
    ]);
    await wd!.deliverDue();

    // One request of each, for the log of the update's workflow (setup) from a little before it failed.
    expect(requests('logs.tail', shop.id)).toBe(1);
    expect(requests('restore_points.list', shop.id)).toBe(1);
    const tail = sim.control.requests().find((r) => r.fn === 'logs.tail')!;
    expect(tail.query).toMatch(/^\?source=setup&since=\d+m$/);

    const error = `setup: ERROR run ${runId} (update) step build_image failed: pip install failed: no matching distribution for lxml==4.6.1`;
    const { slack: payloads, mail: emails } = delivered(`#${runId}`);
    expect(payloads).toHaveLength(1);
    const [event, log] = sections(payloads[0]);
    expect(log).toMatch(/^\*Log \(setup\): 2 lines around the failure, errors first\*\n```\n\d\d:\d\d:\d\d {2}/);
    expect(log!.split('\n')[2]).toContain(error);
    expect(log!.split('\n')[3]).toContain(`setup: run ${runId} (update) step build_image started`);
    expect(event).toMatch(/\*Restore point:\* #\d+ kept: the change failed and the app was left as before/);
    expect(event).toContain('*Instant undo:* not possible');
    expect(event).toMatch(new RegExp(`\\*Backup first:\\* ${shop.name}-\\d{8}-\\d{4}\\.zip \\(#\\d+\\), verified`));
    expect(JSON.stringify(payloads[0])).toContain(
      "*Next step:* Read the failed step's log, fix the cause, then retry the run.",
    );

    expect(emails).toHaveLength(1);
    const text = emails[0]!.text!;
    expect(text).toMatch(/ {2}Restore point: +#\d+ kept: the change failed and the app was left as before/);
    expect(text).toMatch(/ {2}Instant undo: +not possible/);
    expect(text).toContain('  Log (setup): 2 lines around the failure, errors first');
    expect(text).toMatch(new RegExp(`\\n {4}\\d\\d:\\d\\d:\\d\\d {2}${escapeRe(error)}\\n`));
    expect(emails[0]!.html).toContain('<pre style=');
    expect(emails[0]!.html).toContain(error);
    expect(decisions(`failed_runs/run/${runId}`)).toEqual(['slack deliver sent', 'mail deliver sent']);
  });

  it('repeats and resolves cost no request: a repeat shows the context read once, a resolve none', async () => {
    await setUp();
    const shop = app('production');
    const runId = await failedUpdate(shop, 'disk full on /var/lib/docker');
    watchdog('alerts: { repeat_interval: 1h }');
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    const read = sim.control.requests().filter((r) => r.fn === 'logs.tail' || r.fn === 'restore_points.list');
    expect(read).toHaveLength(2);

    clock.advance(61 * MINUTE);
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    const repeat = slack.received.at(-1);
    expect(JSON.stringify(repeat)).toContain('still firing');
    expect(sections(repeat)[1]).toContain(`step build_image failed: disk full on /var/lib/docker`);

    sim.control.setRunState(runId, { state: 'done' });
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    const resolved = slack.received.at(-1);
    expect(JSON.stringify(resolved)).toContain('RESOLVED');
    expect(JSON.stringify(resolved)).not.toContain('```');
    expect(JSON.stringify(resolved)).not.toContain('Restore point');
    // No request of either function since the first read.
    expect(sim.control.requests().filter((r) => r.fn === 'logs.tail' || r.fn === 'restore_points.list')).toEqual(read);
  });

  it('an alert over before its context is read costs no request, and nothing waits for it', async () => {
    await setUp();
    const shop = app('production');
    const run = sim.control.addRun({ appId: shop.id, action: 'restart', state: 'error', reason: 'boom' });
    watchdog();
    await wd!.runOnce(['runs']);
    sim.control.setRunState(run.id, { state: 'done' });
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    expect(requests('logs.tail', shop.id)).toBe(0);
    // Its firing waited for the context, so no channel heard of it: the resolve is quiet too.
    expect(decisions(`failed_runs/run/${run.id}`)).toEqual([
      'slack resolved_quietly suppressed',
      'mail resolved_quietly suppressed',
      'slack resolved_quietly suppressed',
      'mail resolved_quietly suppressed',
    ]);
  });

  it('a log that wrote more since the failure than logs.tail gives: the note says so, not that there were no lines', async () => {
    await setUp();
    const shop = app('production');
    sim.control.failNextRun({ appId: shop.id, action: 'restart', step: 'check', reason: 'health check timed out' });
    const runId = (await apiPost(sim, `/apps/${shop.id}/restart`, {})).body.data.run_id as number;
    // Read two hours on (a daemon started late): the application log writes a line every 20 s, so
    // its 200 newest lines (logs.tail's default limit, reference §8) all come after the failure.
    clock.advance(120 * MINUTE);
    watchdog();
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    const { slack: payloads } = delivered(`#${runId}`);
    expect(payloads).toHaveLength(1);
    expect(sections(payloads[0])[0]).toContain(
      '*Note:* no main log lines around the failure among the 200 newest: more were logged since than logs.tail gives',
    );
  });

  it('plan_required: said once in the log, "logs not available" in each alert, every alert delivered', async () => {
    // A seed whose production has two apps in projects on a plan without logs.
    await setUp({ seed: 7 });
    const first = app('production', false);
    const second = app('production', false, [first.id]);
    const a = sim.control.addRun({ appId: first.id, action: 'restart', state: 'error', reason: 'first' });
    const b = sim.control.addRun({ appId: second.id, action: 'restart', state: 'error', reason: 'second' });
    watchdog();
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    // A later failure of the first app: its refusal is remembered, no request.
    const c = sim.control.addRun({ appId: first.id, action: 'deploy', state: 'error', reason: 'third' });
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();

    const note = "logs not available: the plan of the app's project does not include them (plan_required)";
    for (const run of [a, b, c]) {
      const { slack: payloads, mail: emails } = delivered(`#${run.id}`);
      expect(payloads, `run ${run.id} in Slack`).toHaveLength(1);
      expect(sections(payloads[0])[0]).toContain(`*Note:* ${note}`);
      expect(JSON.stringify(payloads[0])).not.toContain('```');
      expect(emails[0]?.text).toMatch(new RegExp(` {2}Note: +${escapeRe(note)}`));
    }
    expect(requests('logs.tail', first.id)).toBe(1);
    expect(requests('logs.tail', second.id)).toBe(1);
    const warnings = logs.lines().filter((l) => l.level === 40 && String(l.msg).includes('plan_required'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ stage: 'context', fn: 'logs.tail', code: 'plan_required' });

    // The plan upgraded: within the hour the refusal is still remembered; after it, asked again
    // and read, without a reload.
    const project = sim.control.state.projectOf(first);
    project.plan = PLANS_WITH_LOGS[0]!;
    clock.advance(59 * MINUTE);
    const d = sim.control.addRun({ appId: first.id, action: 'deploy', state: 'error', reason: 'fourth' });
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    expect(sections(delivered(`#${d.id}`).slack[0])[0]).toContain(`*Note:* ${note}`);
    expect(requests('logs.tail', first.id)).toBe(1);
    clock.advance(2 * MINUTE);
    const e = sim.control.addRun({ appId: first.id, action: 'deploy', state: 'error', reason: 'fifth' });
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    expect(requests('logs.tail', first.id)).toBe(2);
    expect(JSON.stringify(delivered(`#${e.id}`).slack[0])).not.toContain('plan_required');
  });

  it('a token without view_logs: one refused request, then none; each alert says why', async () => {
    await setUp({
      tokens: [
        {
          token: NO_LOGS_TOKEN,
          namespaces: '*',
          permissions: [
            'deployment_app: read',
            'deployment_workflow: read',
            'deployment_project: read',
            'deployment_server: read',
            'deployment_backup: read',
            'workspace: read',
          ],
        },
      ],
    });
    const first = app('production');
    const second = app('production', true, [first.id]);
    const a = sim.control.addRun({ appId: first.id, action: 'restart', state: 'error', reason: 'first' });
    watchdog('', NO_LOGS_TOKEN);
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    const b = sim.control.addRun({ appId: second.id, action: 'restart', state: 'error', reason: 'second' });
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();

    expect(
      sim.control
        .requests()
        .filter((r) => r.fn === 'logs.tail')
        .map((r) => r.status),
    ).toEqual([403]);
    const note = 'logs not available: the API token lacks deployment_app: read + view_logs (function_not_allowed)';
    for (const run of [a, b]) expect(sections(delivered(`#${run.id}`).slack[0])[0]).toContain(`*Note:* ${note}`);
    expect(logs.lines().filter((l) => l.level === 40 && String(l.msg).includes('function_not_allowed'))).toHaveLength(
      1,
    );
  });

  it.each<[string, RegExp]>([
    ['unavailable', /\*Note:\* logs not available: the service cannot read them now \(unavailable\)$/m],
    ['access_denied', /\*Note:\* logs not available: the API token may not read them for this app \(access_denied\)$/m],
    ['not_found', /\*Note:\* logs not available: the app is gone \(not_found\)$/m],
    // The API down: said as the client's error, which names the function and never the token.
    ['internal_error', /\*Note:\* logs not read: logs\.tail: internal_error \(HTTP 500\): .*$/m],
    // Unlisted codes that name an object's own properties: said as the error too, nothing thrown.
    ['__proto__', /\*Note:\* logs not read: logs\.tail: __proto__ \(HTTP 500\): .*$/m],
    ['constructor', /\*Note:\* logs not read: logs\.tail: constructor \(HTTP 500\): .*$/m],
  ])('logs.tail answering %s: the alert goes at once, saying why it has no log lines', async (code, note) => {
    await setUp();
    const shop = app('production');
    const run = sim.control.addRun({ appId: shop.id, action: 'restart', state: 'error', reason: 'boom' });
    sim.control.setFault(
      'logs.tail',
      Object.hasOwn(ERROR_STATUS, code) ? { errorCode: code as ErrorCode } : { errorWord: code },
    );
    watchdog();
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    const event = sections(delivered(`#${run.id}`).slack[0])[0];
    expect(event).toMatch(note);
    expect(decisions(`failed_runs/run/${run.id}`)).toEqual(['slack deliver sent', 'mail deliver sent']);
    expect(logs.lines().filter((l) => l.level === 40 && l.stage === 'context')).toHaveLength(1);
  });

  it('logs.tail hanging (the API down): the alert waits notify.context.wait, then goes without its context', async () => {
    await setUp();
    const shop = app('production');
    const run = sim.control.addRun({ appId: shop.id, action: 'restart', state: 'error', reason: 'boom' });
    sim.control.setFault('logs.tail', { hang: true });
    watchdog();
    await wd!.runOnce(['runs']);
    // The read hangs; the clock moves on past the wait, which ends it, and the message goes.
    // (Real milliseconds between steps: the SMTP conversation is real I/O, timed on the clock.)
    await advancing(clock, wd!.deliverDue(), 1_000, 5);

    const { slack: payloads, mail: emails } = delivered(`#${run.id}`);
    expect(payloads).toHaveLength(1);
    expect(emails).toHaveLength(1);
    expect(JSON.stringify(payloads[0])).not.toContain('Note:');
    expect(JSON.stringify(payloads[0])).not.toContain('```');
    expect(decisions(`failed_runs/run/${run.id}`)).toEqual([
      'slack context_wait_over sent',
      'mail context_wait_over sent',
    ]);
    // Still pending: read when the API answers again, for the alert's repeats.
    const row = wd!.store.db.prepare('SELECT status FROM alert_context').get() as { status: string };
    expect(row.status).toBe('pending');
  });

  it("the log's text is data: bidi and control characters, mrkdwn and HTML, long lines and the token", async () => {
    await setUp();
    const shop = app('production');
    const hostile =
      `token ${sim.adminToken} \`\`\`end\` \u202egnp.exe\u200b \u001b[31mred\r\nSet-Cookie: x ` +
      `<!channel> *bold* <script>alert(1)</script> ${'x'.repeat(400)}`;
    const runId = await failedUpdate(shop, hostile);
    watchdog();
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();

    const { slack: payloads, mail: emails } = delivered(`#${runId}`);
    const all = JSON.stringify(payloads) + JSON.stringify(emails);
    expect(all).not.toContain(sim.adminToken);
    const log = sections(payloads[0])[1]!;
    const errorLine = log.split('\n')[2]!;
    expect(errorLine).toContain('&lt;!channel&gt; *bold* &lt;script&gt;alert(1)&lt;/script&gt;');
    // A backtick would end the code block: shown as ˋ.
    expect(errorLine).toContain('ˋˋˋendˋ');
    expect(errorLine).toContain('\\u{202e}gnp.exe\\u{200b}');
    expect(errorLine).toContain('token &lt;secret&gt;');
    // Control characters folded: the escape sequence cannot colour a terminal, the line break not end the line.
    expect(errorLine).toContain(' [31mred Set-Cookie: x ');
    expect(hasControl(errorLine)).toBe(false);
    // Cut at the configured width (160 characters of the line, before escaping), with an ellipsis.
    expect(errorLine).toMatch(/x…$/);
    expect(log.split('\n')).toHaveLength(5);

    const html = emails[0]!.html!;
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain(' [31mred Set-Cookie: x ');
    expect(hasControl(emails[0]!.text!.replace(/\n/g, ''))).toBe(false);
    expect(emails[0]!.text).toContain('\\u{202e}gnp.exe');
  });
});

describe('a watcher, delivered', () => {
  it("a failed run's watcher says why, with its backup log line; a stuck run's says how far it is", async () => {
    await setUp();
    const shop = app('production');
    const other = app('production', true, [shop.id]);
    const failed = sim.control.addRun({
      appId: shop.id,
      action: 'backup',
      state: 'error',
      watcher: { state: 'timeout', reason: 'archive upload refused' },
    });
    sim.control.addRun({
      appId: other.id,
      action: 'backup',
      state: 'running',
      startedAgoMs: 3 * 60 * MINUTE,
      watcher: { state: 'waiting', progress: 'uploading off-site' },
    });
    watchdog();
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();

    const failedMessage = delivered(`#${failed.id}`).slack.find((p) => JSON.stringify(p).includes('failed run'));
    const [event, log] = sections(failedMessage);
    // The summary says the watcher's state and reason (so they are not repeated as facts).
    expect(event).toContain('failed on the server (watcher timeout): archive upload refused');
    expect(log).toContain(`backup: ERROR run ${failed.id} (backup) watcher timeout: archive upload refused`);
    // The next cycle says the same from the detail it remembers: no new message, no read of the run.
    const sent = slack.received.length;
    sim.control.resetRequests();
    await wd!.runOnce(['runs']);
    await wd!.deliverDue();
    expect(slack.received.length).toBe(sent);
    const row = wd!.store.db
      .prepare(`SELECT summary FROM alerts WHERE fingerprint = ?`)
      .get(`failed_runs/run/${failed.id}`) as { summary: string };
    expect(row.summary).toContain('failed on the server (watcher timeout): archive upload refused');
    expect(sim.control.requests().filter((r) => r.path.endsWith(`/runs/${failed.id}`))).toHaveLength(0);
    const stuck = slack.received.find((p) => JSON.stringify(p).includes('stuck run'));
    expect(sections(stuck)[0]).toMatch(/has been running for 3h( \d+m)?, waiting on the server: uploading off-site/);
  });
});

/** Whether a text holds a C0 control character (a line break, an escape). */
function hasControl(text: string): boolean {
  return [...text].some((c) => c.charCodeAt(0) < 0x20);
}

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
