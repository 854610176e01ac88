/**
 * A server in a bad state, end to end against the simulator: the servers job raises one server
 * alert, the alerts of the apps on that server are held under it (bad_servers inhibition) and
 * summarised, and when the server recovers its alert resolves and the held alerts still firing are
 * delivered. Real Watchdog cycles, real notifier, the Slack stand-in on loopback.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { BAD_SERVER_STATES } from '../../src/config/state-words.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { engineConfig, eventsOf, manualSim, MINUTE, openWatchdog, tempDir } from './fixtures.js';

let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
let receiver: WebhookReceiver;
let wd: Watchdog | undefined;

/** A token that reads apps and runs but not servers. */
const NO_SERVERS = 'token-without-server-read';

beforeEach(async () => {
  ({ sim, clock } = await manualSim({
    tokens: [
      {
        token: NO_SERVERS,
        namespaces: '*',
        permissions: ['deployment_app: read', 'deployment_workflow: read', 'workspace: read'],
      },
    ],
  }));
  tmp = tempDir();
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await receiver.close();
  await sim.close();
  tmp.cleanup();
});

/** What the Slack stand-in received since the last call, each payload as its JSON text. */
function drain(): string[] {
  const texts = receiver.received.map((p) => JSON.stringify(p));
  receiver.received.length = 0;
  return texts;
}

/** Outbox rows of one fingerprint: status and decision, oldest first. */
function outboxOf(fingerprint: string): string[] {
  const rows = wd!.store.db
    .prepare(`SELECT status, decision FROM outbox WHERE fingerprint = ? ORDER BY id`)
    .all(fingerprint) as { status: string; decision: string }[];
  return rows.map((r) => `${r.status}/${r.decision}`);
}

describe('a server in a bad state', () => {
  it("fires one server alert, holds its apps' alerts under it, and delivers the ones still firing when it recovers", async () => {
    const notify = [
      'notify:',
      `  channels: [{ name: ops, type: slack, webhook_url: "${receiver.url}" }]`,
      '  routes: [{ channels: [ops] }]',
    ].join('\n');
    const config = engineConfig(sim, tmp.dir, '', sim.adminToken, notify);
    expect(config.notify.inhibit.bad_servers).toBe(true);
    wd = openWatchdog(config, clock);

    // Start green for servers: the seed leaves one server in error.
    for (const s of sim.control.state.servers.values()) {
      if (BAD_SERVER_STATES.includes(s.state)) sim.control.checks.servers.setState(s.id, 'running');
    }
    const live = [...sim.control.state.apps.values()].filter((a) => a.state === 'running' && a.serverId !== null);
    const first = live[0]!;
    const [a, b] = live.filter((app) => app.serverId === first.serverId);
    expect(b, 'two running apps on one server').toBeDefined();
    const other = live.find((app) => app.serverId !== first.serverId)!;

    // Baseline: whatever the seed already has fires and is delivered now, so what follows is ours.
    await wd.runOnce(['servers']);
    await wd.runOnce(['runs']);
    await wd.deliverDue();
    drain();

    // The server goes down; an update fails on two of its apps and on an app elsewhere.
    clock.advance(MINUTE);
    const server = sim.control.checks.servers.setState(first.serverId!, 'error');
    const runA = sim.control.addRun({
      appId: a!.id,
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: 'database connection refused',
    });
    const runB = sim.control.addRun({
      appId: b!.id,
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: 'database connection refused',
    });
    const runOther = sim.control.addRun({
      appId: other.id,
      action: 'update',
      state: 'error',
      failedStep: 'build_image',
      reason: 'pip install failed',
    });
    const serverFp = `servers/server/${server.id}`;
    const [fpA, fpB, fpOther] = [runA, runB, runOther].map((r) => `failed_runs/run/${r.id}`) as [
      string,
      string,
      string,
    ];

    // The servers job first: a cause holds only what fires after it (as with Alertmanager).
    expect((await wd.runOnce(['servers'])).complete).toBe(true);
    expect((await wd.runOnce(['runs'])).complete).toBe(true);
    expect(alertStoreOf(wd.store).get(serverFp)).toMatchObject({
      status: 'firing',
      severity: 'critical',
      labels: { check: 'servers', server: server.name },
    });
    expect(alertStoreOf(wd.store).get(fpA)?.labels.server).toBe(server.name);
    await wd.deliverDue();

    const down = drain();
    const serverSummary = alertStoreOf(wd.store).get(serverFp)!.summary;
    expect(serverSummary).toMatch(new RegExp(`^Server ${server.name} is error \\(${server.app_count} apps? on it`));
    expect(down.filter((t) => t.includes(serverSummary) && !t.includes('held back'))).toHaveLength(1);
    const summaries = down.filter((t) => t.includes(`2 alerts held back: ${serverSummary}`));
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toContain(a!.name);
    expect(summaries[0]).toContain(b!.name);
    // The app on another server is not held; the two on the bad server are not paged one by one.
    expect(down.filter((t) => t.includes(other.name) && !t.includes('held back'))).toHaveLength(1);
    expect(down.filter((t) => (t.includes(a!.name) || t.includes(b!.name)) && !t.includes('held back'))).toEqual([]);
    expect(outboxOf(fpA)).toEqual(['held/inhibited']);
    expect(outboxOf(fpOther)).toEqual(['sent/deliver']);

    // While the server is still down, one app's run is fixed: it resolves without a word.
    clock.advance(MINUTE);
    sim.control.setRunState(runB.id, { state: 'done' });
    await wd.runOnce(['runs']);
    await wd.deliverDue();
    expect(drain()).toEqual([]);
    expect(alertStoreOf(wd.store).get(fpB)?.status).toBe('resolved');

    // The server recovers: its alert resolves, and the held alert that still fires is delivered.
    clock.advance(MINUTE);
    sim.control.checks.servers.setState(server.id, 'running');
    await wd.runOnce(['servers']);
    expect(alertStoreOf(wd.store).get(serverFp)?.status).toBe('resolved');
    await wd.deliverDue();
    const up = drain();
    expect(up.filter((t) => t.includes(serverSummary))).toHaveLength(1);
    expect(up.filter((t) => t.includes(a!.name) && !t.includes('held back'))).toHaveLength(1);
    expect(up.join('\n')).not.toContain(b!.name);
    expect(up.join('\n')).not.toContain('held back');
    expect(outboxOf(fpA)).toEqual(['sent/deliver']);
    expect(wd.store.db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE status IN ('pending', 'held')`).get()).toEqual({
      n: 0,
    });
  });
});

describe('a server outage pages like its apps', () => {
  it('carries the most severe environment and severity of its apps to the production route and its mention; each summary is as severe as the worst alert it holds', async () => {
    const oncall = await startWebhookReceiver();
    try {
      const notify = [
        'notify:',
        '  channels:',
        `    - { name: oncall, type: slack, webhook_url: "${oncall.url}", mention: { critical: "<!here>" } }`,
        `    - { name: ops, type: slack, webhook_url: "${receiver.url}" }`,
        '  routes:',
        '    - { match: { environment_type: production }, channels: [oncall] }',
        '    - { channels: [ops] }',
      ].join('\n');
      wd = openWatchdog(engineConfig(sim, tmp.dir, '', sim.adminToken, notify), clock);
      for (const s of sim.control.state.servers.values()) {
        if (BAD_SERVER_STATES.includes(s.state)) sim.control.checks.servers.setState(s.id, 'running');
      }
      // A server with a running production app and a running staging app.
      const running = [...sim.control.state.apps.values()].filter((a) => a.state === 'running' && a.serverId !== null);
      const prod = running.find(
        (p) => p.envType === 'production' && running.some((a) => a.serverId === p.serverId && a.envType === 'staging'),
      );
      expect(prod, 'a server with a production and a staging app').toBeDefined();
      const staging = running.find((a) => a.serverId === prod!.serverId && a.envType === 'staging')!;
      await wd.runOnce(['servers']);
      await wd.runOnce(['runs']);
      await wd.deliverDue();
      drain();
      oncall.received.length = 0;

      clock.advance(MINUTE);
      const server = sim.control.checks.servers.setState(prod!.serverId!, 'error');
      for (const app of [prod!, staging])
        sim.control.addRun({ appId: app.id, action: 'update', state: 'error', reason: 'database connection refused' });
      await wd.runOnce(['servers']);
      await wd.runOnce(['runs']);
      const alert = alertStoreOf(wd.store).get(`servers/server/${server.id}`)!;
      expect(alert).toMatchObject({
        severity: 'critical',
        labels: { check: 'servers', server: server.name, environment_type: 'production' },
      });
      expect(alert.summary).toMatch(/in production\)$/);
      await wd.deliverDue();

      const paged = oncall.received.map((p) => JSON.stringify(p));
      const serverMessage = paged.filter((t) => t.includes(alert.summary) && !t.includes('held back'));
      expect(serverMessage).toHaveLength(1);
      expect(serverMessage[0]).toContain('<!here>');
      // Held under it: the production run's critical alert on oncall, the staging run's warning on ops.
      const held = (texts: string[]) => texts.filter((t) => t.includes('held back'));
      expect(held(paged)).toHaveLength(1);
      expect(held(paged)[0]).toContain('CRITICAL · 1 alert held back');
      const ops = drain();
      expect(held(ops)).toHaveLength(1);
      expect(held(ops)[0]).toContain('WARNING · 1 alert held back');
    } finally {
      await oncall.close();
    }
  });
});

describe('a token without deployment_server: read', () => {
  it('disables the servers job with one alert naming the permission; the runs job goes on', async () => {
    wd = openWatchdog(engineConfig(sim, tmp.dir, '', NO_SERVERS), clock);
    const report = await wd.runOnce(['servers', 'runs']);
    expect(report.jobs.map((j) => `${j.job} ${j.outcome}`)).toEqual(['servers disabled', 'runs ok']);
    expect(report.jobs[0]!.reason).toBe(
      'the token lacks deployment_server: read (servers.list answered function_not_allowed)',
    );
    clock.advance(MINUTE);
    await wd.runOnce(['servers']);
    expect(eventsOf(wd, 'watchdog/').map((e) => `${e.kind} ${e.fingerprint}`)).toEqual([
      'firing watchdog/disabled/servers',
    ]);
    expect(eventsOf(wd, 'servers/')).toEqual([]);
  });
});
