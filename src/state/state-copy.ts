/**
 * A SQLite state copied into a PostgreSQL one, whole: every table the state has, every row with
 * its ids, in ONE PostgreSQL transaction read under SQLite's write lock, so the copy is a single
 * moment of the file and either all of it is in PostgreSQL or none of it. `migrate-state` runs it.
 *
 * Both stores are opened (and so migrated) by this release first, so their tables and columns are
 * the same (one definition per migration builds both: test/state/migration-history.test.ts); the
 * copy is generic over them and needs no change when a migration adds a table. PostgreSQL's identity
 * sequences are moved past the copied ids, and past the highest id SQLite ever gave (its
 * `sqlite_sequence`: AUTOINCREMENT never gives a number twice, even once retention deleted the row),
 * so a new row on PostgreSQL never takes an id the old state used.
 */
import { leaseOn, type LeaseRow } from './leader-lease.js';
import { PostgresError } from './postgres-error.js';
import type { SqlDatabase } from './sql-database.js';
import type { Store } from './store.js';
import { StoreError } from './store-error.js';

/** Rows copied, by table, in the order they were copied. */
export interface StateCopy {
  tables: { table: string; rows: number }[];
  /** Rows the target held and the copy replaced, by table (only tables that held some; meta not counted). */
  replaced: { table: string; rows: number }[];
  /** The schema version both states are at. */
  schemaVersion: number;
}

/** Options of {@link copyState}. */
export interface CopyStateOptions {
  /** Replace the state the target already holds (its rows deleted in the copy's transaction) instead of refusing it. */
  replace: boolean;
}

/**
 * What is not copied, and why: `schema_migrations` is each database's own record of its schema
 * (the target's has the same versions, applied when it was opened).
 */
const NOT_COPIED_TABLES: ReadonlySet<string> = new Set(['schema_migrations']);

/**
 * `meta` keys that belong to a process rather than to the state: the runner lease is the copying
 * process's own while it copies (`claimLease`), and means nothing on the other database.
 */
const NOT_COPIED_META: readonly string[] = ['runner_lease'];

/**
 * Parameters in one INSERT at most: PostgreSQL takes 65,535; fewer keeps a statement small (one
 * round trip to the worker thread each).
 */
const PARAMETERS_PER_INSERT = 20_000;
/** …and rows, for a table of few columns. */
const ROWS_PER_INSERT = 1_000;

/** The target already holds a state; copying into it would mix two. */
export class TargetNotEmptyError extends Error {
  override readonly name = 'TargetNotEmptyError';
  constructor(
    readonly target: string,
    /** Rows the target holds, by table (only tables that hold some). */
    readonly held: { table: string; rows: number }[],
  ) {
    super(
      `${target} already holds a deploy-watchdog state (${held.map((t) => `${t.rows} ${t.table}`).join(', ')}); ` +
        'copying into it would mix two states. Point state.url at an empty database, or give --replace to ' +
        'delete what it holds and put the copy in its place (in the same transaction: all or nothing)',
    );
  }
}

/** Replicas run on the target: a leader holds its lease (`leader-lease.ts`). */
export class ReplicasRunningError extends Error {
  override readonly name = 'ReplicasRunningError';
  constructor(
    readonly target: string,
    readonly leader: { holder: string; leftMs: number },
  ) {
    super(
      `deploy-watchdog ${leader.holder} leads on ${target} (its lease lasts ${Math.ceil(leader.leftMs / 1000)} s more); ` +
        'a copy under running replicas would be mixed with what they write. Stop every replica first ' +
        '(docker compose stop, kubectl scale deployment deploy-watchdog --replicas=0), then copy once the lease has ended',
    );
  }
}

/**
 * Copies the state `from` (SQLite) holds into `to` (PostgreSQL), both migrated to the same schema
 * version (see the file's comment). Throws {@link ReplicasRunningError} when a replica leads on
 * `to`, {@link TargetNotEmptyError} when `to` holds a state and `options.replace` is not set, a
 * {@link StoreError} for a fault of either database; in every case nothing is written to `to`.
 */
export function copyState(from: Store, to: Store, options: CopyStateOptions): StateCopy {
  if (from.db.engine !== 'sqlite' || to.db.engine !== 'postgres') {
    // A programming error: the command opens them so.
    throw new Error(`copyState copies SQLite into PostgreSQL, not ${from.db.engine} into ${to.db.engine}`);
  }
  const schemaVersion = from.schemaVersion();
  if (to.schemaVersion() !== schemaVersion) {
    throw new StoreError(
      to.path,
      'newer-schema',
      `is at schema version ${to.schemaVersion()} and ${from.path} at ${schemaVersion}: both must be this release's`,
    );
  }
  const tables = sqliteTables(from.db).filter((t) => !NOT_COPIED_TABLES.has(t));
  // Under SQLite's write lock: the file as it is at one moment, every table of the same moment,
  // whatever else opens it meanwhile.
  return from.transaction(() =>
    to.transaction(() => {
      const leader = liveLeader(to.db);
      if (leader) throw new ReplicasRunningError(to.path, leader);
      const columns = new Map(tables.map((t) => [t, sameColumns(from.db, to.db, t)]));
      const held = tables
        .filter((t) => t !== 'meta')
        .map((table) => ({ table, rows: countRows(to.db, table) }))
        .filter((t) => t.rows > 0);
      if (held.length > 0 && !options.replace) throw new TargetNotEmptyError(to.path, held);
      const copied = tables.map((table) => {
        try {
          const { where, params } = stateRows(table);
          to.db.prepare(`DELETE FROM ${table}${where}`).run(...params);
          return { table, rows: copyTable(from.db, to.db, table, columns.get(table)!) };
        } catch (err) {
          throw refused(to.path, table, err);
        }
      });
      moveSequencesPast(from.db, to.db);
      return { tables: copied, replaced: held, schemaVersion };
    }),
  );
}

/** A row PostgreSQL refused (a constraint, a trigger of its own) as a fault of the target; any other error as it is. */
function refused(target: string, table: string, err: unknown): unknown {
  if (!(err instanceof PostgresError)) return err;
  return new StoreError(target, 'io', `refused a row of table ${table} (${err.message})`, { cause: err });
}

/**
 * The replica that leads on the target, if one does. The lease row is locked until the copy ends
 * (`FOR UPDATE`): a replica that starts meanwhile takes the lead only once the copy is in, and
 * never leads on half of it.
 */
function liveLeader(db: SqlDatabase): LeaseRow | undefined {
  const lease = db.tableColumns('leader_lease') ? leaseOn(db, ' FOR UPDATE') : undefined;
  return lease && lease.leftMs > 0 ? lease : undefined;
}

/** The state's tables in a SQLite database. */
function sqliteTables(db: SqlDatabase): string[] {
  return db
    .prepare<[], { name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
    )
    .all()
    .map((r) => r.name);
}

/**
 * The columns of `table`, in the source's order, once the target is found to have the same ones:
 * a difference means the two were not migrated by the same build, and nothing is copied.
 */
function sameColumns(from: SqlDatabase, to: SqlDatabase, table: string): string[] {
  const source = [...(from.tableColumns(table) ?? [])];
  const target = to.tableColumns(table);
  const differ = !target || target.size !== source.length || source.some((c) => !target.has(c));
  if (differ) {
    throw new StoreError(
      to.path,
      'migration',
      target
        ? `table ${table} has other columns than in ${from.path} (${[...target].sort().join(', ')} against ${[...source].sort().join(', ')}): were both written by this release?`
        : `has no table ${table}, which ${from.path} has: were both written by this release?`,
    );
  }
  return source;
}

function countRows(db: SqlDatabase, table: string): number {
  return db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n;
}

/** The rows of `table` that are the state's (`meta`: but the keys that are no state's), with the clause's parameters. */
function stateRows(table: string): { where: string; params: readonly string[] } {
  if (table !== 'meta') return { where: '', params: [] };
  return { where: ` WHERE key NOT IN (${NOT_COPIED_META.map(() => '?').join(', ')})`, params: NOT_COPIED_META };
}

/** Copies every row of `table` (meta: but the keys that are no state's), in batches; answers how many. */
function copyTable(from: SqlDatabase, to: SqlDatabase, table: string, columns: string[]): number {
  const list = columns.join(', ');
  const { where, params } = stateRows(table);
  const select = from.prepare(`SELECT ${list} FROM ${table}${where}`).raw();
  const perInsert = Math.max(1, Math.min(ROWS_PER_INSERT, Math.floor(PARAMETERS_PER_INSERT / columns.length)));
  const row = `(${columns.map(() => '?').join(', ')})`;
  const insert = (rows: number) =>
    to.prepare(`INSERT INTO ${table} (${list}) VALUES ${Array(rows).fill(row).join(', ')}`);
  const full = insert(perInsert);
  let batch: unknown[] = [];
  let copied = 0;
  for (const values of select.iterate(...params) as Iterable<unknown[]>) {
    batch.push(...values);
    if (batch.length === perInsert * columns.length) {
      // Counted as the database says: reading the count also makes PostgreSQL's held-back writes
      // (postgres-database.ts) go now, so a row it refuses fails this table's copy, not the next's.
      copied += full.run(...batch).changes;
      batch = [];
    }
  }
  if (batch.length > 0) copied += insert(batch.length / columns.length).run(...batch).changes;
  return copied;
}

/**
 * Moves each identity sequence of the target past the highest id of its table in the source, and
 * past the highest SQLite ever gave there; never back (a sequence only rises, so a state replaced
 * keeps its ids unique too, and a rollback, which leaves sequences as they are, costs a gap at most).
 */
function moveSequencesPast(from: SqlDatabase, to: SqlDatabase): void {
  const given = new Map(
    from
      .prepare<[], { name: string; seq: number }>('SELECT name, seq FROM sqlite_sequence')
      .all()
      .map((r) => [r.name, r.seq]),
  );
  const identities = to
    .prepare<[], { table: string; column: string }>(
      `SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
       WHERE table_schema = current_schema() AND is_identity = 'YES'`,
    )
    .all();
  for (const { table, column } of identities) {
    if (NOT_COPIED_TABLES.has(table)) continue;
    const highest = from.tableColumns(table)?.has(column)
      ? (from.prepare<[], { n: number | null }>(`SELECT MAX(${column}) AS n FROM ${table}`).get()?.n ?? 0)
      : 0;
    const past = Math.max(highest, given.get(table) ?? 0);
    if (past === 0) continue;
    to.prepare(
      `SELECT setval(s, GREATEST(?, COALESCE(pg_sequence_last_value(s), 0)))
       FROM (SELECT pg_get_serial_sequence(?, ?)::regclass AS s) AS q`,
    ).get(past, table, column);
  }
}
