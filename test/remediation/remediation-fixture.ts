/**
 * The remediation stage on a real state (a SQLite file in a temp dir, or a PostgreSQL database
 * when the test says so), fed by the real failed_runs and
 * backups detectors and the real alert lifecycle, acting on the simulator over loopback. The
 * simulator and the remediator share one ManualClock, so "ten minutes later" is `advance(10 * MINUTE)`.
 *
 * A cycle here is what the daemon's cycle is: read the records, detect, and in ONE transaction
 * apply the lifecycle, queue the events and let remediation decide; then, after commit, send.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AlertStore, type AlertRow } from '../../src/alerts/alert-store.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import type { AppListItem, Run } from '../../src/api/schemas.js';
import { silentLogger } from '../../src/lib/logger.js';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import { Secret } from '../../src/lib/secret.js';
import type { BackupsSeen } from '../../src/collectors/snapshot.js';
import { seeBackup } from '../../src/collectors/backups-seen.js';
import { backups } from '../../src/detectors/backups.js';
import { failedRuns } from '../../src/detectors/failed-runs.js';
import { appState } from '../../src/detectors/app-state.js';
import { maintenance } from '../../src/detectors/maintenance.js';
import type { Finding } from '../../src/detectors/finding.js';
import { presented } from '../../src/detectors/registry.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { buildChannels } from '../../src/notify/build-channels.js';
import type { NoticeNotification } from '../../src/notify/channels/channel.js';
import { createNotifier, type Notifier } from '../../src/notify/notifier.js';
import { createRemediation } from '../../src/remediation/create-remediation.js';
import { listAttempts, listAudit, type AttemptRow, type AuditRow } from '../../src/remediation/remediation-store.js';
import type { CycleReport } from '../../src/remediation/cycle-planner.js';
import type { Remediator } from '../../src/remediation/remediator.js';
import type { PassReport } from '../../src/remediation/send-and-follow.js';
import { Metrics } from '../../src/lib/metrics.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import type { Store } from '../../src/state/store.js';
import { SQLITE_BACKEND, type StateBackend, type TestState } from '../helpers/state-backends.js';
import { JumpingClock } from '../api/jumping-clock.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const T0 = '2026-11-01T12:00:00Z';

/** The config around the remediation section: two log channels, production routed apart. */
export function configText(remediation: string, extra = ''): string {
  return `
api: { base_url: "http://127.0.0.1:9", token: test-token }
checks:
  failed_runs: { retrying_grace: 1m }
notify:
  channels:
    - { name: ops-log, type: log }
    - { name: prod-log, type: log }
  routes:
    - { match: { environment_type: production }, channels: [prod-log] }
    - { channels: [ops-log] }
remediation:
${remediation
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
${extra}`;
}

/** A started simulator and a clock shared with it. */
export interface SimWithClock {
  sim: RunningSimulator;
  clock: ManualClock;
}

/** A second token with every right, as after a token rotation. */
export const ROTATED_TOKEN = 'rotated-admin-token';
/** A token with every permission that may change staging apps only (reference §5.4): access_denied elsewhere. */
export const STAGING_ONLY_TOKEN = 'staging-only-token';
/** The same, refused elsewhere with function_not_allowed: it holds change functions in staging only (§5.4-5). */
export const STAGING_ONLY_UNHELD_TOKEN = 'staging-only-unheld-token';

/** Starts a simulator on a ManualClock (six apps: production, staging and development). */
export async function startSim(): Promise<SimWithClock> {
  const clock = new ManualClock(T0);
  const sim = await startSimulator({
    clock,
    apps: 6,
    seed: 1,
    tokens: [
      { token: ROTATED_TOKEN, namespaces: '*', permissions: '*' },
      { token: STAGING_ONLY_TOKEN, namespaces: '*', permissions: '*', changeEnvironments: ['staging'] },
      {
        token: STAGING_ONLY_UNHELD_TOKEN,
        namespaces: '*',
        permissions: '*',
        changeEnvironments: ['staging'],
        changeRefusal: 'function_not_allowed',
      },
    ],
  });
  return { sim, clock };
}

/** The first app of an environment type with no run under way. */
export function appOf(sim: RunningSimulator, envType: 'production' | 'staging' | 'development', skip = 0): number {
  const state = sim.control.state;
  const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
  const apps = [...state.apps.values()].filter((a) => a.envType === envType && !busy.has(a.id) && !a.upgrade);
  const app = apps[skip];
  if (!app) throw new Error(`no free ${envType} app #${skip}`);
  return app.id;
}

/** What one cycle reads: runs, apps' backups (the backup problems kept: default stale), apps' state and maintenance. */
export interface CycleRecords {
  runs?: number[];
  backupApps?: number[];
  backupProblems?: readonly string[];
  apps?: number[];
}

/** Options of {@link Harness.open}. */
export interface HarnessOptions {
  /** Reuse a directory (a restart; SQLite: its state.db). */
  dir?: string;
  /** The state's backend; SQLite by default. */
  backend?: StateBackend;
  /** Reuse a state (a restart). */
  state?: TestState;
  extra?: string;
  token?: string;
}

/** One remediation stage over one state file. */
export class Harness {
  readonly store: Store;
  readonly client: ApiClient;
  readonly notifier: Notifier;
  readonly remediator: Remediator;
  readonly metrics = new Metrics({ processMetrics: false });
  readonly alertStore: AlertStore;
  /** The state file's installation id (migration 005), the head of every key: `dw-<it>.<n>-…`. */
  readonly installation: string;

  private constructor(
    readonly dir: string,
    readonly state: TestState,
    readonly config: Config,
    readonly sim: RunningSimulator,
    readonly clock: ManualClock,
    token: string,
  ) {
    this.store = state.open();
    this.alertStore = new AlertStore(this.store);
    this.installation = installationOf(this.store);
    // The client's own clock only paces its rate limiter and retries; a jumping clock makes those
    // waits instant. Remediation and the simulator share the ManualClock.
    this.client = createApiClient({
      baseUrl: sim.baseUrl,
      token: new Secret(token),
      clock: new JumpingClock(),
      maxRetries: 0,
      timeoutMs: 5_000,
    });
    const channels = buildChannels(this.config.notify.channels, { logger: silentLogger, clock });
    this.notifier = createNotifier({
      store: this.store,
      notify: config.notify,
      alerts: config.alerts,
      channels,
      clock,
    });
    const remediator = createRemediation({
      config,
      client: this.client,
      store: this.store,
      notifier: this.notifier,
      clock,
      logger: silentLogger,
      metrics: this.metrics,
    });
    if (!remediator) throw new Error('no remediator for this config');
    this.remediator = remediator;
  }

  /** A harness for the remediation section given (YAML, indented under `remediation:`). */
  static open(s: SimWithClock, remediation: string, options: HarnessOptions = {}): Harness {
    const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'dw-remediation-'));
    const config = parseConfig(configText(remediation, options.extra), {}, 'test.yaml', { baseDir: dir });
    const state = options.state ?? (options.backend ?? SQLITE_BACKEND).fresh(dir);
    return new Harness(dir, state, config, s.sim, s.clock, options.token ?? s.sim.adminToken);
  }

  /** A harness on a simulator of its own (closed with it), so each test starts from the seed. */
  static async start(remediation: string, options: Omit<HarnessOptions, 'dir' | 'state'> = {}): Promise<Harness> {
    const s = await startSim();
    const h = Harness.open(s, remediation, options);
    h.#ownSim = true;
    return h;
  }

  /** The same state file and simulator, as a restarted process would find them. */
  restart(remediation: string, options: { token?: string } = {}): Harness {
    const h = Harness.open({ sim: this.sim, clock: this.clock }, remediation, {
      dir: this.dir,
      state: this.state,
      ...options,
    });
    h.#ownSim = this.#ownSim;
    return h;
  }

  #ownSim = false;

  /**
   * One cycle of the `runs` job over the given runs (its complete snapshot) and, when given, of
   * the `backups` job over the given apps: read, detect, then lifecycle + outbox + remediation in
   * one transaction. Returns the remediation's report.
   */
  async cycle(records: CycleRecords): Promise<CycleReport> {
    return (await this.#cycle(records, true))!;
  }

  /** A cycle without remediation: only the alerts are brought up to date (another process decides). */
  async observe(records: CycleRecords): Promise<void> {
    await this.#cycle(records, false);
  }

  async #cycle(records: CycleRecords, remediate: boolean): Promise<CycleReport | undefined> {
    const now = this.clock.now();
    const runFindings = records.runs ? await this.#runFindings(records.runs, now) : undefined;
    const backupFindings = records.backupApps
      ? await this.#backupFindings(records.backupApps, now, records.backupProblems ?? ['stale'])
      : undefined;
    const appFindings = records.apps ? await this.#appFindings(records.apps, now) : undefined;
    return this.store.transaction(() => {
      const events = [];
      if (runFindings)
        events.push(...applyFindings(this.alertStore, { job: 'runs', findings: runFindings, now }, this.#lifecycle()));
      if (backupFindings)
        events.push(
          ...applyFindings(this.alertStore, { job: 'backups', findings: backupFindings, now }, this.#lifecycle()),
        );
      if (appFindings)
        events.push(
          ...applyFindings(this.alertStore, { job: 'maintenance', findings: appFindings, now }, this.#lifecycle()),
        );
      this.notifier.enqueue(events, now);
      return remediate ? this.remediator.inCycle(now) : undefined;
    });
  }

  /** The send-and-follow pass that runs after a cycle commits. */
  pass(): Promise<PassReport> {
    return this.remediator.executePending();
  }

  /** A cycle, then its pass. */
  async cycleAndPass(records: CycleRecords): Promise<{ cycle: CycleReport; pass: PassReport }> {
    const cycle = await this.cycle(records);
    return { cycle, pass: await this.pass() };
  }

  /** Open alerts (firing and pending). */
  openAlerts(): AlertRow[] {
    return this.alertStore.open();
  }

  audit(): AuditRow[] {
    return listAudit(this.store);
  }

  attempts(): AttemptRow[] {
    return listAttempts(this.store);
  }

  /** Remediation notices queued in the outbox: channel and notice. */
  notices(): { channel: string; notice: NoticeNotification }[] {
    const rows = this.store.db
      .prepare(
        `SELECT o.channel, COALESCE(b.body, o.payload) AS payload FROM outbox AS o LEFT JOIN outbox_bodies AS b ON b.body_id = o.body_id
         WHERE o.source = 'notice' AND o.kind = 'remediation' ORDER BY o.id`,
      )
      .all() as { channel: string; payload: string }[];
    return rows.map((r) => ({ channel: r.channel, notice: JSON.parse(r.payload) as NoticeNotification }));
  }

  /** The change requests the simulator answered for one function, oldest first. */
  changes(fn: 'runs.retry' | 'apps.backup' | 'apps.restart' | 'apps.maintenance'): {
    key: string | undefined;
    status: number;
  }[] {
    return this.sim.control
      .requests()
      .filter((r) => r.fn === fn)
      .map((r) => ({ key: r.idempotencyKey, status: r.status }));
  }

  /** The remediation counter's value for one label set. */
  async metric(labels: { policy: string; action: string; outcome: string }): Promise<number> {
    const m = await this.metrics.remediation.get();
    return (
      m.values.find(
        (v) =>
          v.labels.policy === labels.policy && v.labels.action === labels.action && v.labels.outcome === labels.outcome,
      )?.value ?? 0
    );
  }

  /** Closes the store and client; with `keepDir` (a restart follows) the state file and simulator stay. */
  async close(options: { keepDir?: boolean } = {}): Promise<void> {
    await this.remediator.stop(0);
    await this.client.close();
    this.store.close();
    if (options.keepDir) return;
    this.state.cleanup();
    fs.rmSync(this.dir, { recursive: true, force: true });
    if (this.#ownSim) await this.sim.close();
  }

  /** Simulator time. */
  get s(): SimWithClock {
    return { sim: this.sim, clock: this.clock };
  }

  #lifecycle() {
    return { forCycles: 1, repeatIntervalMs: this.notifier.lifecycleRepeatIntervalMs };
  }

  async #runFindings(ids: number[], now: number): Promise<Finding[]> {
    const runs: Run[] = await Promise.all(ids.map((id) => this.client.runs.get(id)));
    const apps = new Map<number, AppListItem>();
    for (const run of runs)
      if (run.app_id !== null && !apps.has(run.app_id)) apps.set(run.app_id, await this.client.apps.get(run.app_id));
    const checks = this.config.checks;
    return failedRuns(
      { job: 'runs', takenAt: now, runs, details: new Map(runs.map((r) => [r.id, r])), apps },
      { ...checks.failed_runs, active_states: checks.stuck_runs.active_states },
      now,
    ).map(presented);
  }

  /**
   * The app_state and maintenance findings of the given apps (read by id), as one job's: an app in
   * maintenance fires at once (the check's hold is the lifecycle's, tested with it).
   */
  async #appFindings(appIds: number[], now: number): Promise<Finding[]> {
    const apps = await Promise.all(appIds.map((id) => this.client.apps.get(id)));
    const { checks } = this.config;
    return [
      ...appState({ job: 'backups', takenAt: now, apps, backups: new Map() }, checks.app_state),
      ...maintenance(
        { job: 'maintenance', takenAt: now, apps, restorePoints: new Map() },
        { ...checks.maintenance, max_duration: HOUR },
      ).map(({ holdForMs: _held, ...f }) => f),
    ].map(presented);
  }

  async #backupFindings(appIds: number[], now: number, problems: readonly string[]): Promise<Finding[]> {
    const apps = await Promise.all(appIds.map((id) => this.client.apps.get(id)));
    const b = this.config.checks.backups;
    // Every format counts as full here (no `full_formats`): the simulator's backups as they come.
    const { full_formats: _every, ...states } = b;
    const seen = new Map<number, BackupsSeen>();
    for (const app of apps) {
      // The app's backups newest first, every one met: its newest, newest finished and newest good.
      for (const backup of (await this.client.backups.list({ app_id: app.id, limit: 50 })).items)
        seen.set(app.id, seeBackup(seen.get(app.id), backup, states));
    }
    return backups(
      { job: 'backups', takenAt: now, apps, backups: seen },
      {
        ...b,
        require_verified: problems.includes('unverified'),
        offsite: problems.includes('offsite'),
        offsite_required: false,
        offsite_upload_timeout: null,
        size_drop: null,
      },
      now,
    )
      .findings.filter((f) => problems.includes(f.labels.problem ?? ''))
      .map(presented);
  }
}

/** The installation id a state file's keys carry (`meta.installation_id`). */
export function installationOf(store: Store): string {
  return (store.db.prepare(`SELECT value FROM meta WHERE key = 'installation_id'`).get() as { value: string }).value;
}
