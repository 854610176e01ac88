/**
 * `migrate-state` against a real PostgreSQL (a throwaway cluster on loopback) with a SQLite state
 * made by real `check` cycles against the simulator: alerts and events, notifications sent and one
 * still waiting (Slack down), a silence made and one ended, a remediation retry sent and audited,
 * the context of a failed run. After the copy every table holds the same rows with the same ids,
 * the state commands print the same from either database, and a `check` on PostgreSQL carries on:
 * the waiting notification is delivered, nothing announced is announced again, no retry is sent
 * twice, and new rows take ids past every id SQLite gave. Refusals (a database that holds a state,
 * a daemon still on the file) and a failure half-way leave the database as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { LeaderLease } from '../../src/state/leader-lease.js';
import { PostgresDatabase } from '../../src/state/postgres-database.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { claimLease } from '../../src/state/runner-lease.js';
import { Store } from '../../src/state/store.js';
import { runCli, writeConfig, type CliResult } from '../helpers/cli-harness.js';
import type { PostgresCluster } from '../helpers/postgres.js';
import { testCluster } from '../helpers/state-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { daemonConfigYaml, spawnDaemon, until, LOG_CHANNEL_NOTIFY } from './daemon-fixture.js';

let pg: PostgresCluster;
let sim: RunningSimulator;
let hook: WebhookReceiver;
let dir: string;
/** The daemon's config on SQLite, and the same on PostgreSQL (`state.url: ${DATABASE_URL}`). */
let onSqlite: string;
let onPostgres: string;
let sqliteFile: string;
/** The idempotency key of the retry the SQLite cycles sent. */
let retryKey: string;

const REASON = 'migrate-e2e: health check timed out';

beforeAll(async () => {
  pg = testCluster();
  sim = await startSimulator({ apps: 20, seed: 3 });
  hook = await startWebhookReceiver();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-migrate-'));
  onSqlite = writeConfig(dir, config('state: { path: ./state.db }'), 'sqlite.yaml');
  onPostgres = writeConfig(dir, config('state: { url: "${DATABASE_URL}" }'), 'postgres.yaml');
  sqliteFile = path.join(dir, 'state.db');

  // A failed staging update the policy retries, and the cycle that finds everything else.
  sim.control.addRun({
    appId: freeApp('staging'),
    action: 'update',
    state: 'error',
    failedStep: 'restart',
    reason: REASON,
  });
  expect((await cli('check', '--config', onSqlite)).code).toBe(0);
  const sent = retries();
  expect(sent).toHaveLength(1);
  retryKey = sent[0]!;
  // A silence in force and one ended by hand.
  expect(
    (
      await cli(
        'silence',
        '--config',
        onSqlite,
        '--match',
        'check=certificates',
        '--for',
        '2h',
        '--reason',
        'renewal under way',
        '--by',
        'ops-alice',
      )
    ).code,
  ).toBe(0);
  const ended = await cli(
    'silence',
    '--config',
    onSqlite,
    '--match',
    'check=backups',
    '--for',
    '1h',
    '--reason',
    'short',
    '--by',
    'ops-alice',
  );
  expect((await cli('unsilence', '--config', onSqlite, '--by', 'ops-alice', ended.stdout.split('\n')[0]!)).code).toBe(
    0,
  );
  // Slack down for a new failure: its notification waits in the outbox.
  hook.setMode('fail500');
  sim.control.addRun({
    appId: freeApp('production'),
    action: 'restart',
    state: 'error',
    reason: 'migrate-e2e: waiting',
  });
  const down = await cli('check', '--config', onSqlite, '--job', 'runs');
  expect(down.stdout).toMatch(/still waiting in the outbox/);
  hook.setMode('ok');

  // What the copy must carry: a state with something in the tables that matter.
  const counts = sqliteCounts();
  for (const table of [
    'alerts',
    'events',
    'outbox',
    'silences',
    'remediation_attempts',
    'remediation_audit',
    'alert_context',
  ]) {
    expect(counts[table], table).toBeGreaterThan(0);
  }
  expect(pendingIds(sqliteRows('outbox'))).not.toEqual([]);
}, 120_000);

afterAll(async () => {
  await hook?.close();
  await sim?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function config(state: string): string[] {
  return [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 1000',
    state,
    'notify:',
    '  channels: [{ name: ops-slack, type: slack, webhook_url: "${SLACK_WEBHOOK_URL}" }]',
    '  routes: [{ channels: [ops-slack] }]',
    '  delivery: { initial_backoff: 200ms, max_backoff: 1s }',
    'log: { level: warn }',
    'server: { listen: "off" }',
    'remediation:',
    '  enabled: true',
    '  dry_run: false',
    '  poll_interval: 1s',
    '  policies:',
    '    - { name: retry-staging, action: runs.retry, match: { environment_type: staging }, match_re: { reason: "migrate-e2e: .*" } }',
  ];
}

/** Runs a command line with the daemon's variables, the database's URL `url` among them; no secret may show. */
async function cli(...argv: string[]): Promise<CliResult> {
  return cliOn(pg.url('postgres'), ...argv);
}

async function cliOn(url: string, ...argv: string[]): Promise<CliResult> {
  const result = await runCli(argv, {
    env: { DMS_API_TOKEN: sim.adminToken, SLACK_WEBHOOK_URL: hook.url, DATABASE_URL: url },
  });
  for (const secret of [pg.password, sim.adminToken, hook.url]) {
    expect(result.stdout + result.stderr).not.toContain(secret);
  }
  return result;
}

/** A running app of `env` with no run under way, so a run added to it is the only one. */
function freeApp(env: 'staging' | 'production'): number {
  const state = sim.control.state;
  const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
  const app = [...state.apps.values()].find(
    (a) => a.envType === env && !busy.has(a.id) && !a.upgrade && a.state === 'running' && a.deployedAt !== null,
  );
  if (!app) throw new Error(`no free ${env} app`);
  return app.id;
}

/** The idempotency keys of the retries sent to the service, in order. */
function retries(): string[] {
  return sim.control
    .requests()
    .filter((r) => r.fn === 'runs.retry')
    .map((r) => r.idempotencyKey ?? '');
}

/** Rows of a SQLite table, read on a connection of its own. */
function sqliteRows(table: string, file = sqliteFile): Record<string, unknown>[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

function sqliteTables(file = sqliteFile): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as {
        name: string;
      }[]
    )
      .map((r) => r.name)
      .filter((t) => t !== 'schema_migrations')
      .sort();
  } finally {
    db.close();
  }
}

function sqliteCounts(): Record<string, number> {
  return Object.fromEntries(sqliteTables().map((t) => [t, sqliteRows(t).length]));
}

/** A store on the database at `url`, closed after `fn`. */
function withPostgres<T>(url: string, fn: (store: Store) => T): T {
  const store = Store.openPostgres({ url: new Secret(url), connectTimeoutMs: 10_000, statementTimeoutMs: 30_000 });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

function postgresRows(url: string, table: string): Record<string, unknown>[] {
  return withPostgres(url, (s) => rowsOf(s, table));
}

function rowsOf(store: Store, table: string): Record<string, unknown>[] {
  return store.db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
}

/** Rows in an order of their own (by their JSON with sorted keys), to compare two databases' tables. */
function canonical(rows: Record<string, unknown>[]): string[] {
  return rows
    .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))))
    .sort();
}

function pendingIds(rows: Record<string, unknown>[]): number[] {
  return rows.filter((r) => r.status === 'pending').map((r) => r.id as number);
}

/** The rows per table `migrate-state` printed. */
function printedCounts(stdout: string): Record<string, number> {
  return Object.fromEntries(
    [...stdout.matchAll(/^ {2}([a-z_]+)\s+(\d+)$/gm)].filter((m) => m[1] !== 'total').map((m) => [m[1]!, Number(m[2])]),
  );
}

function expectSameAsSqlite(url: string): void {
  withPostgres(url, (s) => {
    for (const table of sqliteTables()) {
      expect(canonical(rowsOf(s, table)), table).toEqual(canonical(sqliteRows(table)));
    }
  });
}

describe('a SQLite state copied by migrate-state', () => {
  let url: string;
  let copied: CliResult;
  beforeAll(async () => {
    url = pg.url(pg.createDatabase());
    copied = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile);
  }, 60_000);

  it('prints what it copied, table by table, in one transaction', () => {
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stderr).toBe('');
    expect(copied.stdout).toMatch(
      new RegExp(
        `^copied ${sqliteFile} into postgres://watchdog@127\\.0\\.0\\.1:${pg.port}/test_\\d+_\\d+ \\(schema version ${ALL_MIGRATIONS.at(-1)!.version}\\) in one transaction, in \\d+\\.\\d s:\\n`,
      ),
    );
    expect(printedCounts(copied.stdout)).toEqual(sqliteCounts());
    const total = Object.values(sqliteCounts()).reduce((a, b) => a + b, 0);
    expect(copied.stdout).toMatch(new RegExp(`^ {2}total\\s+${total}$`, 'm'));
    expect(copied.stdout).toContain(`${sqliteFile} is left as it was`);
  });

  it('puts every row of every table in PostgreSQL, with its ids', () => {
    expectSameAsSqlite(url);
  });

  it('moves every identity sequence past the highest id SQLite gave', () => {
    const given = Object.fromEntries(
      (sqliteRows('sqlite_sequence') as { name: string; seq: number }[]).map((r) => [r.name, r.seq]),
    );
    withPostgres(url, (s) => {
      for (const table of ['events', 'outbox', 'remediation_attempts', 'remediation_audit']) {
        const next = s.db
          .prepare<[string], { n: number }>(`SELECT nextval(pg_get_serial_sequence(?, 'id')) AS n`)
          .get(table)!.n;
        expect(next, table).toBe((given[table] ?? 0) + 1);
      }
    });
  });

  it.each([
    [['alerts']],
    [['alerts', '--json']],
    [['silences', '--all']],
    [['silences', '--json']],
    [['actions']],
    [['actions', '--json']],
  ])('`%s` prints the same from PostgreSQL as from SQLite', async (argv) => {
    const before = await cliOn(url, ...argv, '--config', onSqlite);
    const after = await cliOn(url, ...argv, '--config', onPostgres);
    expect(before.code).toBe(0);
    expect(after).toEqual(before);
    expect(after.stdout).not.toMatch(/^no /);
  });
});

describe('a check on the copy', () => {
  it('delivers what waited, announces nothing again, sends no retry twice, and gives new rows new ids', async () => {
    const url = pg.url(pg.createDatabase());
    expect((await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile)).code).toBe(0);
    const outboxBefore = sqliteRows('outbox');
    const waiting = pendingIds(outboxBefore);
    const lastEvent = Math.max(...sqliteRows('events').map((r) => r.id as number));
    const lastRow = Math.max(...outboxBefore.map((r) => r.id as number));
    const firingBefore = new Set(
      sqliteRows('alerts')
        .filter((r) => r.status === 'firing')
        .map((r) => r.fingerprint),
    );
    // A new problem for the check to find; and the Slack channel's pause (200 ms) over.
    sim.control.addRun({ appId: freeApp('production'), action: 'restart', state: 'error', reason: 'migrate-e2e: new' });
    await new Promise((r) => setTimeout(r, 1_100));
    const received = hook.received.length;

    const checked = await cliOn(url, 'check', '--config', onPostgres);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);

    const outbox = postgresRows(url, 'outbox');
    expect(outbox.filter((r) => waiting.includes(r.id as number)).map((r) => r.status)).toEqual(
      waiting.map(() => 'sent'),
    );
    expect(pendingIds(outbox)).toEqual([]);
    expect(hook.received.length).toBeGreaterThan(received);
    // What the check wrote is about the new problem only: no alert firing before fired again.
    const newEvents = postgresRows(url, 'events').filter((r) => (r.id as number) > lastEvent);
    expect(newEvents.map((r) => r.kind)).toContain('firing');
    for (const e of newEvents.filter((r) => r.kind === 'firing')) expect(firingBefore.has(e.fingerprint)).toBe(false);
    const newRows = outbox.filter((r) => (r.id as number) > lastRow);
    for (const r of newRows) expect(r.event_id === null || (r.event_id as number) > lastEvent).toBe(true);
    // The retry sent from SQLite is followed, never sent again under another key.
    expect(retries()).toEqual([retryKey]);
  }, 60_000);
});

describe('migrate-state refuses', () => {
  it('a database that already holds a state, saying what to do; --replace puts the copy in its place', async () => {
    const url = pg.url(pg.createDatabase());
    expect((await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile)).code).toBe(0);
    // The database moves on (a silence made there) before the same copy is asked for again.
    expect(
      (
        await cliOn(
          url,
          'silence',
          '--config',
          onPostgres,
          '--match',
          'app=x',
          '--for',
          '1h',
          '--reason',
          'later',
          '--by',
          'ops',
        )
      ).code,
    ).toBe(0);
    const silences = postgresRows(url, 'silences');

    const again = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile);
    expect(again.code).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(
      new RegExp(
        `^error: postgres://watchdog@127\\.0\\.0\\.1:${pg.port}/test_\\d+_\\d+ already holds a deploy-watchdog state \\(\\d+ alert_context, \\d+ alerts, .*\\d+ silences.*\\); copying into it would mix two states\\. Point state\\.url at an empty database, or give --replace`,
      ),
    );
    expect(again.stderr).toMatch(/^nothing was copied: .* is as it was; run this again once that is fixed$/m);
    expect(canonical(postgresRows(url, 'silences'))).toEqual(canonical(silences));

    const replaced = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile, '--replace');
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toMatch(/^It replaced the state the database held \(.*\d+ silences.*\)\.$/m);
    expectSameAsSqlite(url);
  }, 60_000);

  it('a database a replica leads on, and copies once its lease has ended', async () => {
    const url = pg.url(pg.createDatabase());
    const lease = new LeaderLease({
      target: { url: new Secret(url), connectTimeoutMs: 10_000, statementTimeoutMs: 30_000 },
      where: 'the test database',
      leaseMs: 60_000,
      timeoutMs: 10_000,
    });
    try {
      const epoch = await lease.acquire();
      expect(epoch).toBe(1);
      const refused = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile, '--replace');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^error: deploy-watchdog ${lease.holder.replace(/[./]/g, '\\$&')} leads on postgres://watchdog@127\\.0\\.0\\.1:${pg.port}/test_\\d+_\\d+ \\(its lease lasts [1-6]?\\d s more\\); a copy under running replicas would be mixed with what they write\\. Stop every replica first`,
        ),
      );
      withPostgres(url, (s) => expect(rowsOf(s, 'alerts')).toEqual([]));
      expect(await lease.release(epoch!)).toBe(true);
    } finally {
      await lease.close();
    }
    const copied = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile);
    expect(copied.code, copied.stderr).toBe(0);
  }, 60_000);

  it('while a daemon holds the file, and copies once it has stopped', async () => {
    const own = fs.mkdtempSync(path.join(dir, 'daemon-'));
    fs.copyFileSync(sqliteFile, path.join(own, 'state.db'));
    const daemonConfig = writeConfig(
      own,
      daemonConfigYaml(sim, {
        jobs: '{ runs: "*/30 * * * * *", attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
        notify: LOG_CHANNEL_NOTIFY,
        server: '{ listen: "off" }',
      }),
    );
    const url = pg.url(pg.createDatabase());
    const daemon = spawnDaemon(sim, daemonConfig);
    try {
      await until('the daemon to start', () => daemon.output().includes('deploy-watchdog started'), daemon.output);
      const refused = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', path.join(own, 'state.db'));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(
          `^error: deploy-watchdog run \\(pid ${daemon.child.pid} on .+\\) is working on this state file; a copy now would leave out what it writes from now on\\. Stop it first`,
        ),
      );
      // Refused before the database was touched: not even the tables are made.
      const db = PostgresDatabase.open({
        url: new Secret(url),
        connectTimeoutMs: 10_000,
        statementTimeoutMs: 30_000,
        busyTimeoutMs: 5_000,
      });
      expect(db.tableColumns('schema_migrations')).toBeUndefined();
      db.close();
    } finally {
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);
    }
    const copied = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', path.join(own, 'state.db'));
    expect(copied.code, copied.stderr).toBe(0);
  }, 90_000);
});

describe('migrate-state', () => {
  it('leaves nothing half-copied when PostgreSQL refuses a row, and copies all of it when tried again', async () => {
    const url = pg.url(pg.createDatabase());
    // The last table copied refuses its rows, by a trigger of the database's own.
    const installation = withPostgres(url, (s) => {
      s.db.exec(`
        CREATE FUNCTION refuse_rows() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'not today'; END $$;
        CREATE TRIGGER refuse_rows BEFORE INSERT ON source_health FOR EACH ROW EXECUTE FUNCTION refuse_rows();
      `);
      return s.getMeta('installation_id');
    });

    const failed = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^error: state database postgres:\/\/watchdog@127\.0\.0\.1:\d+\/test_\d+_\d+: refused a row of table source_health \(not today\)$/m,
    );
    expect(failed.stderr).toMatch(/^nothing was copied: /m);
    withPostgres(url, (s) => {
      for (const table of sqliteTables().filter((t) => t !== 'meta')) expect(rowsOf(s, table), table).toEqual([]);
      expect(rowsOf(s, 'meta')).toEqual([{ key: 'installation_id', value: installation }]);
    });
    // And the file is free again: a daemon's lease can be taken.
    const file = Store.open(sqliteFile);
    claimLease(file, 'check').release();
    file.close();

    withPostgres(url, (s) => s.db.exec('DROP TRIGGER refuse_rows ON source_health'));
    const copied = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', sqliteFile);
    expect(copied.code, copied.stderr).toBe(0);
    expectSameAsSqlite(url);
  }, 60_000);

  it('brings an older state to this release first, then copies it', async () => {
    const file = path.join(fs.mkdtempSync(path.join(dir, 'old-')), 'state.db');
    const old = Store.open(file, { migrations: ALL_MIGRATIONS.filter((m) => m.version <= 4) });
    old.db
      .prepare(
        `INSERT INTO silences (id, matchers, starts_at, ends_at, created_by, reason, created_at) VALUES ('s-old', '[{"name":"app","op":"=","value":"shop"}]', 1, 4102444800000, 'ops', 'from an old release', 1)`,
      )
      .run();
    old.close();
    const url = pg.url(pg.createDatabase());
    const copied = await cliOn(url, 'migrate-state', '--config', onPostgres, '--from', file);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toContain(`(schema version ${ALL_MIGRATIONS.at(-1)!.version})`);
    expect(printedCounts(copied.stdout).silences).toBe(1);
    expect(postgresRows(url, 'silences')).toMatchObject([
      { id: 's-old', reason: 'from an old release', expired_by: null },
    ]);
  }, 60_000);

  it.each([
    [
      'no --from',
      () => ['migrate-state', '--config', onPostgres],
      /^error: --from FILE is required\n\nusage: deploy-watchdog migrate-state/,
    ],
    [
      'a --from that does not exist',
      () => ['migrate-state', '--config', onPostgres, '--from', path.join(dir, 'nothing.db')],
      /^error: --from .*nothing\.db: no such file\n/,
    ],
    [
      'a config without state.url',
      () => ['migrate-state', '--config', onSqlite, '--from', sqliteFile],
      /^error: .*sqlite\.yaml has no state\.url: give the PostgreSQL database to copy into as state\.url/,
    ],
  ])('says what is wrong with %s, exit 2', async (_what, argv, message) => {
    const result = await cli(...argv());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('needs the variables of state only, and says which one is not set', async () => {
    const result = await runCli(['migrate-state', '--config', onPostgres, '--from', sqliteFile], { env: {} });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^configuration is not valid:\n.*state\.url: .*DATABASE_URL/);
    expect(result.stderr).not.toMatch(/DMS_API_TOKEN|SLACK_WEBHOOK_URL/);
  });

  it('says PostgreSQL cannot be reached, exit 1, and leaves the file free', async () => {
    const closed = pg.url('nowhere').replace(`:${pg.port}/`, ':9/');
    const result = await cliOn(closed, 'migrate-state', '--config', onPostgres, '--from', sqliteFile);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: state database postgres:\/\/watchdog@127\.0\.0\.1:9\/nowhere: PostgreSQL cannot be reached/,
    );
    const file = Store.open(sqliteFile);
    claimLease(file, 'check').release();
    file.close();
  });
});
