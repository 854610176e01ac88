/** Permissions, metrics and secrets of the engine, against the simulator. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { setRepeatInterval } from '../../src/lib/repeated-log.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { captureLogger, engineConfig, eventsOf, manualSim, MINUTE, tempDir } from './fixtures.js';

const VIEWER = 'viewer-token-without-workflow-read';
let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
let wd: Watchdog | undefined;

beforeEach(async () => {
  ({ sim, clock } = await manualSim({
    tokens: [
      {
        token: VIEWER,
        namespaces: '*',
        permissions: ['deployment_app: read', 'deployment_project: read', 'deployment_backup: read', 'workspace: read'],
      },
    ],
  }));
  tmp = tempDir();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await sim.close();
  tmp.cleanup();
});

describe('a check the token lacks the permission for', () => {
  it('raises one "disabled" alert, stops calling that function, and the other jobs keep working', async () => {
    wd = Watchdog.open({
      config: engineConfig(sim, tmp.dir, 'jobs: { maintenance: "off", servers: "off", installers: "off" }', VIEWER),
      clock,
      logger: captureLogger('silent').logger,
    });
    const first = await wd.runOnce();
    const runs = first.jobs.find((j) => j.job === 'runs')!;
    expect(runs.outcome).toBe('disabled');
    expect(runs.reason).toBe('the token lacks deployment_workflow: read (runs.list answered function_not_allowed)');
    expect(first.jobs.filter((j) => j.job !== 'runs').map((j) => j.outcome)).toEqual(['ok', 'ok', 'ok']);
    const alert = alertStoreOf(wd.store).get('watchdog/disabled/runs')!;
    expect(alert.summary).toBe('runs check disabled: the token lacks deployment_workflow: read');
    expect(alert.labels.source).toBeUndefined();

    sim.control.resetRequests();
    for (let i = 0; i < 3; i++) {
      clock.advance(MINUTE);
      const again = await wd.runOnce();
      expect(again.jobs.find((j) => j.job === 'runs')!.outcome).toBe('disabled');
    }
    expect(sim.control.requests().filter((r) => r.fn.startsWith('runs.'))).toEqual([]);
    expect(eventsOf(wd, 'watchdog/').map((e) => `${e.kind} ${e.fingerprint}`)).toEqual([
      'firing watchdog/disabled/runs',
    ]);
  });
});

describe('a token that may not ask whoami', () => {
  it.each(['function_not_allowed', 'access_denied'] as const)(
    'is answered %s: whoami is optional, every job still runs',
    async (code) => {
      sim.control.setFault('whoami', { errorCode: code });
      wd = Watchdog.open({
        config: engineConfig(sim, tmp.dir, 'jobs: { maintenance: "off" }'),
        clock,
        logger: captureLogger('silent').logger,
      });
      const report = await wd.runOnce();
      expect(report.jobs.map((j) => `${j.job} ${j.outcome}`)).toEqual([
        'servers ok',
        'installers ok',
        'runs ok',
        'attention ok',
        'urls ok',
        'backups ok',
      ]);
    },
  );
});

describe('a source down for days', () => {
  afterEach(() => setRepeatInterval(MINUTE));

  it('says "cannot read" once per log.repeat_every and job, then with the count of the cycles between', async () => {
    setRepeatInterval(10 * MINUTE);
    const capture = captureLogger('info');
    const config = engineConfig(sim, tmp.dir, 'jobs: { maintenance: "off", servers: "off", installers: "off" }');
    wd = Watchdog.open({ config, clock, logger: capture.logger });
    sim.control.setFault('runs.list', { errorCode: 'internal_error' });
    for (let i = 0; i < 12; i++) {
      await wd.runOnce(['runs']);
      clock.advance(MINUTE);
    }
    // The warning, not the source alert's own line ("cannot read runs: …", said as it fires).
    const said = capture.lines().filter((l) => /^cannot read runs($| \()/.test(String(l.msg)));
    expect(said.map((l) => [l.msg, l.job, l.repeated])).toEqual([
      ['cannot read runs', 'runs', undefined],
      ['cannot read runs (repeated 10 times in the last 600 s)', 'runs', 10],
    ]);
  });
});

describe('metrics', () => {
  it('counts cycles by outcome, API requests by function and status, errors by code, and open alerts', async () => {
    const metrics = new Metrics({ processMetrics: false });
    wd = Watchdog.open({ config: engineConfig(sim, tmp.dir), clock, logger: captureLogger('silent').logger, metrics });
    sim.control.addRun({ appId: 2, state: 'error' });
    await wd.runOnce(['runs']);
    sim.control.setFault('urls.list', { errorCode: 'internal_error' });
    await wd.runOnce(['urls']);
    const text = await metrics.render();
    expect(text).toMatch(/deploy_watchdog_cycles_total\{source="runs",outcome="ok"\} 1/);
    expect(text).toMatch(/deploy_watchdog_cycles_total\{source="urls",outcome="failed"\} 1/);
    expect(text).toMatch(/deploy_watchdog_api_requests_total\{function="runs\.list",status="200"\} \d+/);
    expect(text).toMatch(/deploy_watchdog_api_requests_total\{function="urls\.list",status="500"\} 1/);
    expect(text).toMatch(/deploy_watchdog_api_errors_total\{function="urls\.list",code="internal_error"\} 1/);
    expect(text).toMatch(/deploy_watchdog_open_alerts\{check="failed_runs",severity="\w+"\} [1-9]/);
    expect(text).toMatch(/deploy_watchdog_cycle_duration_seconds_count\{source="runs"\} 1/);
  });
});

describe('a page the daemon no longer needs', () => {
  it('is counted aborted, never an API error', async () => {
    // Pages of one run, each answered late: the walk stops at its cutoff with the next page on its way.
    const few = await manualSim({ apps: 3 });
    few.sim.control.setFault('runs.list', { latencyMs: 300 });
    const config = engineConfig(few.sim, tmp.dir);
    const metrics = new Metrics({ processMetrics: false });
    const logger = captureLogger('silent').logger;
    wd = Watchdog.open({
      config: { ...config, api: { ...config.api, page_size: 1 } },
      clock: few.clock,
      logger,
      metrics,
    });
    try {
      expect((await wd.runOnce(['runs'])).jobs[0]!.outcome).toBe('ok');
    } finally {
      await wd.stop(1_000);
      wd = undefined;
      await few.sim.close();
    }
    const text = await metrics.render();
    expect(text).toMatch(/deploy_watchdog_api_requests_total\{function="runs\.list",status="aborted"\} [1-9]/);
    expect(text).not.toContain('deploy_watchdog_api_errors_total{');
  });
});

describe('the last success of each job', () => {
  it('is in /metrics from the start, read from the state, while the service cannot be read', async () => {
    wd = Watchdog.open({ config: engineConfig(sim, tmp.dir), clock, logger: captureLogger('silent').logger });
    await wd.runOnce(['runs']);
    const readAt = clock.now();
    await wd.stop(1_000);
    clock.advance(60 * MINUTE);
    sim.control.setFault('runs.list', { errorCode: 'internal_error' });

    // Restarted in an outage: an alert on the gauge's age ("not read for an hour") must still see it.
    const metrics = new Metrics({ processMetrics: false });
    wd = Watchdog.open({ config: engineConfig(sim, tmp.dir), clock, logger: captureLogger('silent').logger, metrics });
    await wd.start();
    expect(await metrics.render()).toContain(
      `deploy_watchdog_last_success_timestamp_seconds{source="runs"} ${readAt / 1000}\n`,
    );
  });
});

describe('metric labels from the service', () => {
  it('counts an error code the reference does not list as other, however many the service invents', async () => {
    const metrics = new Metrics({ processMetrics: false });
    wd = Watchdog.open({ config: engineConfig(sim, tmp.dir), clock, logger: captureLogger('silent').logger, metrics });
    sim.control.setFault('urls.list', { inventedErrorCodes: true });
    for (let i = 0; i < 3; i++) await wd.runOnce(['urls']);
    const text = await metrics.render();
    // Each cycle retries the 500s, so the service invented several codes; they are one series.
    expect(text).toMatch(/deploy_watchdog_api_errors_total\{function="urls\.list",code="other"\} ([3-9]|\d\d+)/);
    expect(text).not.toContain('invented_');
    expect(text.match(/deploy_watchdog_api_errors_total\{function="urls\.list"/g)).toHaveLength(1);
  });
});

describe('secrets in logs', () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    receiver.setMode('fail500');
  });
  afterEach(() => receiver.close());

  it('never logs the API token or the webhook URL, through API failures and failed deliveries', async () => {
    const capture = captureLogger('trace');
    const extra = ['checks:', '  sources: { failure_threshold: 1 }'].join('\n');
    const notify = [
      'notify:',
      '  channels:',
      '    - { name: console, type: log }',
      `    - { name: slack, type: slack, webhook_url: "${receiver.url}" }`,
      '  routes: [{ channels: [console, slack] }]',
    ].join('\n');
    const config = engineConfig(sim, tmp.dir, extra, sim.adminToken, notify);
    wd = Watchdog.open({ config, clock, logger: capture.logger });
    sim.control.addRun({ appId: 2, state: 'error' });
    await wd.runOnce(['runs']);
    sim.control.setFault('*', { errorCode: 'invalid_token' });
    clock.advance(MINUTE);
    await wd.runOnce(['runs', 'urls']);
    await wd.deliverDue();
    await wd.stop(1_000);
    wd = undefined;
    expect(receiver.requests).toBeGreaterThan(0);
    const logs = capture.text();
    expect(logs).toMatch(/cannot read runs/);
    expect(logs).toMatch(/delivery failed/);
    expect(logs).not.toContain(sim.adminToken);
    expect(logs).not.toContain(receiver.url);
    expect(logs).not.toContain(new URL(receiver.url).pathname);
  });
});
