/**
 * Shared set-up of the fault suite: a small simulator on loopback driven by a ManualClock the
 * engine shares, a temp state directory, a config built from YAML, and small helpers to read what
 * the engine wrote. Everything real: HTTP to the simulator, SQLite in a temp file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { silentLogger } from '../../src/lib/logger.js';
import { Watchdog, type WatchdogOptions } from '../../src/app/watchdog.js';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../packages/simulator/src/index.js';
import type { Prng } from '../../packages/simulator/src/prng.js';
import { Secret } from '../../src/lib/secret.js';
import { LeaderLease } from '../../src/state/leader-lease.js';
import type { SqlDatabase } from '../../src/state/sql-database.js';
import { Store } from '../../src/state/store.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import type { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { binArgs } from '../helpers/test-build.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** A temp directory removed by `cleanup`. */
export function tempDir(prefix = 'dw-faults-'): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A simulator whose time is a ManualClock that the engine shares. */
export async function manualSim(
  options: SimulatorOptions = {},
): Promise<{ sim: RunningSimulator; clock: ManualClock }> {
  const clock = new ManualClock();
  const sim = await startSimulator({ apps: 20, seed: 7, ...options, clock });
  return { sim, clock };
}

/**
 * The suite's config: the simulator, a state file in `dir`, no listener, no retries unless `extra`
 * says so, small pages (lists span several pages, so a shift can happen between two of them).
 * The request timeout is generous (5s) so a healthy answer never times out on a loaded CI machine;
 * a case about hanging answers passes a short `timeout` so they end quickly. `extra` is YAML
 * appended at the top level (sections not already present), `notify` replaces the default
 * log-only notify section.
 */
export function faultConfig(
  sim: RunningSimulator,
  dir: string,
  options: { extra?: string; notify?: string; api?: string; pageSize?: number; timeout?: string } = {},
): Config {
  const text = [
    'api:',
    '  base_url: ${SIM_URL}',
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 1000',
    `  timeout: ${options.timeout ?? '5s'}`,
    `  page_size: ${options.pageSize ?? 10}`,
    options.api ?? '  max_retries: 0',
    'state:',
    '  path: ./state.db',
    options.notify ??
      ['notify:', '  channels: [{ name: console, type: log }]', '  routes: [{ channels: [console] }]'].join('\n'),
    'server:',
    '  listen: "off"',
    options.extra ?? '',
  ].join('\n');
  return parseConfig(text, { SIM_URL: sim.baseUrl, DMS_API_TOKEN: sim.adminToken }, 'faults.yaml', { baseDir: dir });
}

/** Opens a Watchdog on a config with the shared clock and a silent logger. */
export function openWatchdog(config: Config, clock: ManualClock, extra: Partial<WatchdogOptions> = {}): Watchdog {
  return Watchdog.open({ config, clock, logger: silentLogger, ...extra });
}

/** One alert event row. */
export interface EventRow {
  kind: string;
  fingerprint: string;
}

/** Every alert event written, oldest first. */
export function events(wd: Watchdog): EventRow[] {
  return wd.store.db.prepare('SELECT kind, fingerprint FROM events ORDER BY id').all() as EventRow[];
}

/** Fingerprints of the firing alerts of a job, sorted. */
export function firing(wd: Watchdog, job: string): string[] {
  const rows = wd.store.db
    .prepare(`SELECT fingerprint FROM alerts WHERE status = 'firing' AND job = ? ORDER BY fingerprint`)
    .all(job) as { fingerprint: string }[];
  return rows.map((r) => r.fingerprint);
}

/**
 * Waits for `work` while moving the manual clock forward in `stepMs` steps, so waits on the clock
 * (retry backoff, Retry-After, send timeouts) end without sleeping long in real time. With
 * `realMs` > 0 each step also lets that much real time pass, for work that needs real I/O to
 * finish before its clock-driven timeout (an SMTP conversation).
 */
export async function advancing<T>(clock: ManualClock, work: Promise<T>, stepMs = 1_000, realMs = 0): Promise<T> {
  let done = false;
  const result = work.finally(() => {
    done = true;
  });
  while (!done) {
    await new Promise<void>((resolve) => (realMs > 0 ? setTimeout(resolve, realMs) : setImmediate(resolve)));
    if (!done) clock.advance(stepMs);
  }
  return result;
}

/**
 * How many messages the notifier recorded as delivered on a channel: one per group per delivery
 * round (every row of a group due in a round goes out in one message and is marked sent with the
 * same time) plus one per notice. Compared with what the peer accepted, it shows each message
 * arrived once, whatever the rendering looks like.
 */
export function recordedMessages(db: Pick<SqlDatabase, 'prepare'>, channel: string): number {
  const groups = db
    .prepare(
      `SELECT COUNT(*) AS n FROM (SELECT DISTINCT group_key, sent_at FROM outbox WHERE channel = ? AND status = 'sent' AND source = 'event') AS m`,
    )
    .get(channel) as { n: number };
  const notices = db
    .prepare(`SELECT COUNT(*) AS n FROM outbox WHERE channel = ? AND status = 'sent' AND source = 'notice'`)
    .get(channel) as { n: number };
  return groups.n + notices.n;
}

/** The `app` label (or, for alerts without one, the `server` label) of every event's alert. */
export function eventSubjects(
  db: Pick<SqlDatabase, 'prepare'>,
): { id: number; kind: string; subject: string | null }[] {
  const rows = db
    .prepare(`SELECT e.id, e.kind, a.labels FROM events e JOIN alerts a ON a.fingerprint = e.fingerprint ORDER BY e.id`)
    .all() as { id: number; kind: string; labels: string }[];
  return rows.map((r) => {
    const labels = JSON.parse(r.labels) as Record<string, string>;
    return { id: r.id, kind: r.kind, subject: labels.app ?? labels.server ?? null };
  });
}

/**
 * Round `round` of a churn test: new problems (a failed update of a non-production app, which
 * remediation retries, and a failed restart in production), a certificate near its end and, from
 * the third round, an earlier one renewed, and some churn of the estate.
 */
export function stageProblems(sim: RunningSimulator, round: number, rng: Prng): void {
  const c = sim.control;
  const live = [...c.state.apps.values()].filter((a) => a.deployedAt !== null && a.state === 'running');
  const nonProd = live.filter((a) => a.envType === 'staging' || a.envType === 'development');
  const prod = live.filter((a) => a.envType === 'production');
  c.addRun({ appId: rng.pick(nonProd).id, action: 'update', state: 'error' });
  c.addRun({ appId: rng.pick(prod).id, action: 'restart', state: 'error' });
  const withUrls = live.filter((a) => a.urlIds.length > 0);
  c.checks.certificates.expire(withUrls[round % withUrls.length]!.urlIds[0]!, { inDays: 2 });
  if (round >= 2) c.checks.certificates.renew(withUrls[(round - 2) % withUrls.length]!.urlIds[0]!);
  c.churn(0.1);
}

/**
 * After a churn test with crashes, what reached a Slack stand-in and an SMTP server (both on one
 * route): every event has its outbox row on both channels, none left waiting or given up; each
 * peer accepted every message recorded as sent, and at most `repeats` more (a crash between the
 * peer's answer and "recorded as sent" makes whoever delivers next send that message again; a
 * channel sends one message at a time); every event's app (or server) is named in a message of
 * each. More than `atLeast` events and subjects, or the test proved little.
 */
export function expectDelivered(
  db: Pick<SqlDatabase, 'prepare'>,
  peers: { slack: WebhookReceiver; mail: SmtpSink },
  bounds: { repeats: number; atLeast: number },
): void {
  const rows = db
    .prepare(
      `SELECT e.id, o.channel, o.status, o.decision
         FROM events e JOIN alerts a ON a.fingerprint = e.fingerprint
         LEFT JOIN outbox o ON o.event_id = e.id
        ORDER BY e.id`,
    )
    .all() as { id: number; channel: string | null; status: string | null; decision: string | null }[];
  expect(rows.length).toBeGreaterThan(bounds.atLeast);
  const byEvent = new Map<number, typeof rows>();
  for (const r of rows) byEvent.set(r.id, [...(byEvent.get(r.id) ?? []), r]);
  for (const [id, own] of byEvent) {
    expect(own.map((r) => r.channel).sort(), `event ${id}`).toEqual(['mail', 'slack']);
    for (const r of own) {
      expect(['sent', 'suppressed'], `event ${id} on ${r.channel}: ${r.status} (${r.decision})`).toContain(r.status);
    }
  }
  for (const [channel, accepted] of [
    ['slack', peers.slack.received.length],
    ['mail', peers.mail.messages.length],
  ] as const) {
    const recorded = recordedMessages(db, channel);
    expect(accepted, `${channel}: accepted vs recorded ${recorded}`).toBeGreaterThanOrEqual(recorded);
    expect(accepted, `${channel}: accepted vs recorded ${recorded}`).toBeLessThanOrEqual(recorded + bounds.repeats);
  }
  const slackText = peers.slack.received.map((p) => JSON.stringify(p)).join('\n');
  const mailText = peers.mail.messages.map((m) => m.text ?? '').join('\n');
  const subjects = eventSubjects(db).filter((e) => e.subject !== null);
  expect(subjects.length).toBeGreaterThan(bounds.atLeast);
  for (const e of subjects) {
    expect(slackText, `event ${e.id} (${e.kind}) of ${e.subject} on Slack`).toContain(e.subject!);
    expect(mailText, `event ${e.id} (${e.kind}) of ${e.subject} by mail`).toContain(e.subject!);
  }
}

/** Remediation acted once per failed run (max_attempts 1): one Idempotency-Key per retried run, however often it was sent. */
export function expectOneKeyPerRetriedRun(sim: RunningSimulator): void {
  const retries = sim.control.requests().filter((r) => r.fn === 'runs.retry');
  const keysByRun = new Map<string, Set<string>>();
  for (const r of retries) keysByRun.set(r.path, (keysByRun.get(r.path) ?? new Set()).add(r.idempotencyKey ?? ''));
  expect(keysByRun.size, 'some retries were sent').toBeGreaterThan(0);
  for (const [run, keys] of keysByRun) expect([...keys], run).toHaveLength(1);
}

/**
 * The tables the leader's work writes: all but `meta` (a follower's probe writes it) and what
 * people write through the console or the CLI (silences; acknowledgements, which these tests make
 * none of).
 */
const LEADER_TABLES = [
  'alerts',
  'events',
  'outbox',
  'notification_log',
  'notify_channel_state',
  'notify_digest_log',
  'source_health',
  'alert_context',
  'remediation_attempts',
  'remediation_audit',
  'remediation_skip_state',
  'unrouted_events',
  'slack_app_messages',
  'slack_app_message_alerts',
];

/**
 * Installs the test's own audit of fencing in the PostgreSQL state at `url` (its tables created
 * first, as the daemon would): a statement trigger on every table of the leader's work records
 * the epoch the writing transaction was fenced with (`deploy_watchdog.epoch`, empty when it was
 * not fenced) beside the epoch the lease holds at that moment, in `fence_audit (claimed, held)`.
 */
export async function installFenceAudit(url: string): Promise<void> {
  Store.openPostgres({ url: new Secret(url), connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 }).close();
  const lease = new LeaderLease({
    target: { url: new Secret(url), connectTimeoutMs: 5_000, statementTimeoutMs: 5_000 },
    where: 'test',
    leaseMs: 2_000,
    timeoutMs: 5_000,
  });
  await lease.current();
  await lease.close();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(`
      CREATE TABLE fence_audit (id BIGSERIAL PRIMARY KEY, tbl TEXT NOT NULL, op TEXT NOT NULL, claimed BIGINT, held BIGINT NOT NULL);
      CREATE FUNCTION fence_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO fence_audit (tbl, op, claimed, held)
        SELECT TG_TABLE_NAME, TG_OP, NULLIF(current_setting('deploy_watchdog.epoch', true), '')::bigint, epoch
          FROM leader_lease;
        RETURN NULL;
      END $$;
      ${LEADER_TABLES.map(
        (t) =>
          `CREATE TRIGGER fence_audit AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION fence_audit();`,
      ).join('\n')}
    `);
  } finally {
    await db.end();
  }
}

/** No write of the leader's tables under a stale epoch, or unfenced, by the audit of {@link installFenceAudit}. */
export function expectNoStaleWrites(db: Pick<SqlDatabase, 'prepare'>): void {
  const stale = db
    .prepare(`SELECT * FROM fence_audit WHERE claimed IS NULL OR claimed <> held ORDER BY id LIMIT 5`)
    .all();
  expect(stale).toEqual([]);
}

/**
 * The config of a churn test's `run` (crash-restart, failover): the runs job every second, URLs and
 * backups every two, both channels on one route, quick delivery retries, remediation retrying
 * non-production failures once; `state` is the section's flow-style value.
 */
export function churnConfigYaml(
  sim: RunningSimulator,
  peers: { slack: WebhookReceiver; mail: SmtpSink },
  state: string,
): string {
  return [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 500',
    '  page_size: 50',
    `state: ${state}`,
    'jobs: { runs: "* * * * * *", urls: "*/2 * * * * *", backups: "*/2 * * * * *", attention: "off", maintenance: "off", jitter: 0s }',
    'notify:',
    '  channels:',
    `    - { name: slack, type: slack, webhook_url: "${peers.slack.url}" }`,
    `    - { name: mail, type: email, smtp: { host: 127.0.0.1, port: ${peers.mail.port}, secure: none }, from: watchdog@example.com, to: [ops@example.com] }`,
    '  routes: [{ channels: [slack, mail] }]',
    '  max_items_per_message: 100',
    '  delivery: { interval: 200ms, initial_backoff: 1s, max_backoff: 2s, timeout: 2s }',
    'remediation:',
    '  enabled: true',
    '  dry_run: false',
    '  policies:',
    '    - { name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] }, max_attempts: 1, now: true }',
    'server: { listen: "off" }',
    'log: { level: info, format: json }',
    '',
  ].join('\n');
}

/**
 * Writes the config file of a `deploy-watchdog run` child: the simulator's API, a state file
 * beside the config, `lines` (jobs, notify, …), no listener, JSON logs. Answers its path.
 */
export function writeRunConfig(dir: string, sim: RunningSimulator, lines: readonly string[]): string {
  const file = path.join(dir, 'watchdog.yaml');
  const head = ['api:', `  base_url: ${sim.baseUrl}`, '  token: ${DMS_API_TOKEN}', '  requests_per_second: 500'];
  const tail = ['server: { listen: "off" }', 'log: { level: info, format: json }', ''];
  fs.writeFileSync(file, [...head, 'state: { path: ./state.db }', ...lines, ...tail].join('\n'));
  return file;
}

/** A `deploy-watchdog run` child and how it ended. */
export interface RunChild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** `deploy-watchdog run` children of one test: their output kept together, those still running killed at the end. */
export class RunChildren {
  output = '';
  readonly #children = new Set<ChildProcess>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** Starts `run` on a config file, with a 5 s stop timeout. */
  start(config: string): RunChild {
    const root = path.resolve(import.meta.dirname, '../..');
    const child = spawn(process.execPath, binArgs(['run', '--config', config, '--stop-timeout', '5s']), {
      cwd: root,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.add(child);
    child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, exited };
  }

  /** Kills (SIGKILL) every child still running. */
  killAll(): void {
    for (const c of this.#children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    this.#children.clear();
  }
}
