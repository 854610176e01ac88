/**
 * The leader lease of a PostgreSQL state (`state.url`): one row that says which replica leads,
 * until when, and under which epoch. Every statement is one `UPDATE … WHERE … RETURNING`, so the
 * database decides who leads, never two replicas' clocks:
 *
 *   acquire   takes the lease when it has expired (database time), with epoch + 1
 *   renew     pushes the expiry on, only for its holder and epoch, only while it has not expired
 *   release   ends it now, so a rolling restart fails over at once
 *
 * The expiry is `now() + lease` on the server. The holder's own side (when to stop acting) is
 * `leader-election.ts`; the fence every write of the leader's work checks is {@link FENCE_SQL}.
 * `check` takes the lease once, synchronously through the store ({@link takeLeaseNow}), so that
 * it never works beside a leader.
 *
 * Its own asynchronous `pg` connection, not the store's: the store reaches PostgreSQL through a
 * worker thread that blocks the main thread per statement for up to connect + statement timeout
 * (seconds), and fails fast for a while after a failure. A renewal must neither wait behind it nor
 * block the daemon, and it must fail within a quarter of the lease so the next one can try.
 *
 * The table is created here rather than by a migration: the versioned migrations build the same
 * tables on both engines, and this one is PostgreSQL's only. It is not state either: nothing
 * copies it, prunes it, or reads it but the replicas (and an operator asking who leads:
 * `SELECT * FROM leader_lease`).
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { LeaseHolder } from './runner-lease.js';
import type { SqlDatabase } from './sql-database.js';
import type { PostgresTarget } from './store.js';
import { withoutSslParameters, type AsideStatement } from './postgres-database.js';
import { pgErrorParts, postgresFailure } from './postgres-error.js';
import { placeholderValues, postgresPlaceholders } from './postgres-placeholders.js';
import { ReconnectingClient } from './reconnecting-client.js';

/** The lease as the database holds it. */
export interface LeaseRow {
  /** Who holds (or last held) it: `<random>@<host>/<pid>`; empty when nobody ever did. */
  holder: string;
  epoch: number;
  /** How long it still lasts by the database's clock (ms); 0 or less: expired, free to take. */
  leftMs: number;
}

/** Options of {@link LeaderLease}. */
export interface LeaderLeaseOptions {
  /** The state database (its URL, TLS and connect timeout; the statement timeout is {@link timeoutMs}). */
  target: PostgresTarget;
  /** The URL without its password, for messages (`Store.path`). */
  where: string;
  /** How long a lease lasts unless renewed (`state.leader.lease`). */
  leaseMs: number;
  /** How long one statement (with its connection) may take before it counts as failed. */
  timeoutMs: number;
  /** This process's name in the lease; random per process by default (see {@link leaseHolder}). */
  holder?: string;
}

/**
 * The key of the advisory lock under which the table is created: two replicas starting at once
 * would otherwise both try `CREATE TABLE` and one would fail on the catalog's unique key.
 * "dw-lease" in ASCII.
 */
const CREATE_LOCK_KEY = '7239304896315704677';

const CREATE_SQL = `
  CREATE TABLE IF NOT EXISTS leader_lease (
    id         INTEGER     PRIMARY KEY CHECK (id = 1),
    holder     TEXT        NOT NULL,
    epoch      BIGINT      NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    since      TIMESTAMPTZ NOT NULL
  );
  INSERT INTO leader_lease (id, holder, epoch, expires_at, since)
  VALUES (1, '', 0, to_timestamp(0), to_timestamp(0))
  ON CONFLICT (id) DO NOTHING`;

/**
 * The lease a renewal and a release change: its holder's of its epoch only, and only while it
 * lasts (a lapsed lease is never revived); its epoch returned, none when it is not this holder's.
 */
const WHILE_HELD = 'WHERE id = 1 AND holder = @holder AND epoch = @epoch AND expires_at > now() RETURNING epoch';

/** Renewal: the expiry a lease from now. */
const RENEW_SQL = `
  UPDATE leader_lease SET expires_at = now() + @leaseMs * interval '1 millisecond'
  ${WHILE_HELD}`;

/** Release: expired now, so the next replica's attempt takes it. */
const RELEASE_SQL = `
  UPDATE leader_lease SET expires_at = now()
  ${WHILE_HELD}`;

/** Whether the lease is free to take, before the takeover waits for the fence's lock. */
const FREE_SQL = `SELECT expires_at <= now() AS free FROM leader_lease WHERE id = 1`;

/**
 * The lease as a {@link LeaseRow}: the epoch as float8 (a number on every connection, where a
 * BIGINT is a string on the lease's own), far below 2^53.
 */
const CURRENT_SQL = `
  SELECT holder, epoch::float8 AS epoch, (EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::float8 AS "leftMs"
    FROM leader_lease WHERE id = 1`;

/**
 * The key of the advisory lock that orders the leader's work and a takeover ("dw-fence" in
 * ASCII): every fenced transaction holds it shared from its fence to its end, a takeover takes it
 * exclusively for its UPDATE. So a takeover waits for the transactions of the last epoch in
 * flight, and none of them can begin once it is under way. The lease row itself is never locked
 * by the work: a renewal (an UPDATE of the row on the lease's own connection) waits on nothing
 * the work holds. (It once was `FOR SHARE` on the row, which made every renewal wait for the
 * leader's own transaction, and a stuck one froze the lease for all.)
 */
const FENCE_LOCK_KEY = '7239304843833008997';

/**
 * Takeover: only once the lease has expired on the server's clock; the epoch rises. Under the
 * fence's lock, in one statement: the lock is taken (the CTE is read) before the row is written,
 * and let go of at the commit. The statements name their parameters (`@holder`), as the stores'
 * do, for the store's path too.
 */
const FENCED_ACQUIRE_SQL = `
  WITH fence AS (SELECT pg_advisory_xact_lock(${FENCE_LOCK_KEY}) AS locked)
  UPDATE leader_lease
     SET holder = @holder, epoch = epoch + 1, expires_at = now() + @leaseMs * interval '1 millisecond', since = now()
    FROM fence
   WHERE id = 1 AND expires_at <= now()
  RETURNING epoch`;

/** How long the leader's work may wait or run on the server, for one term of `leaseMs` (see {@link fencePrelude}). */
export interface FenceTimeouts {
  /** A lock (a takeover's, another writer's row). */
  lockMs: number;
  /** One statement. */
  statementMs: number;
  /** Idle inside the transaction: a client gone without the server seeing it. */
  idleMs: number;
}

/**
 * The fence's first statements (one round trip), run first in every transaction of the leader's
 * work: this transaction's timeouts on the server, shorter than the lease, so whatever it holds
 * is let go of before another replica can lead, even when the leader is gone without the server
 * seeing it; then the fence's lock, shared ({@link FENCE_LOCK_KEY}).
 */
export function fencePrelude(t: FenceTimeouts): string {
  const ms = (n: number) => `'${Math.max(1, Math.floor(n))}'`;
  return [
    `SELECT set_config('lock_timeout', ${ms(t.lockMs)}, true),`,
    `set_config('statement_timeout', ${ms(t.statementMs)}, true),`,
    `set_config('idle_in_transaction_session_timeout', ${ms(t.idleMs)}, true);`,
    `SELECT pg_advisory_xact_lock_shared(${FENCE_LOCK_KEY})`,
  ].join(' ');
}

/**
 * The fence, run on the store's own connection after {@link fencePrelude} (`?`: holder, epoch): a
 * row only while this holder's lease of this epoch lasts. A statement of its own, so its snapshot
 * is taken after the fence's lock was granted: a takeover that committed before sees its epoch.
 * The transaction also carries its epoch as the setting `deploy_watchdog.epoch`, so a trigger or
 * an audit in the database can tell which leader wrote.
 */
export const FENCE_SQL = `
  SELECT set_config('deploy_watchdog.epoch', epoch::text, true) AS epoch
    FROM leader_lease
   WHERE id = 1 AND holder = ? AND epoch = ? AND expires_at > statement_timestamp()`;

/** A holder name for this process: random (a restarted process is another holder), then where it runs. */
export function leaseHolder(): string {
  return `${randomBytes(6).toString('hex')}@${os.hostname()}/${process.pid}`;
}

/**
 * Takes the lease now if it has expired, synchronously on the store's connection (creating the
 * table first if no replica has): for `check`, which must not work beside a leader. Its epoch, or
 * the lease as another holds it.
 */
export function takeLeaseNow(db: SqlDatabase, holder: string, leaseMs: number): { epoch: number } | { held: LeaseRow } {
  return db.transaction(() => {
    db.exec(`SELECT pg_advisory_xact_lock(${CREATE_LOCK_KEY}); ${CREATE_SQL}`);
    if (db.prepare<[], { free: boolean }>(FREE_SQL).get()?.free) {
      const taken = db
        .prepare<[{ holder: string; leaseMs: number }], { epoch: number }>(FENCED_ACQUIRE_SQL)
        .get({ holder, leaseMs });
      if (taken) return { epoch: Number(taken.epoch) };
    }
    return { held: leaseOn(db)! };
  });
}

/** The lease as the database has it now, read on the store's connection; `lock`: a clause such as ` FOR UPDATE`. */
export function leaseOn(db: SqlDatabase, lock = ''): LeaseRow | undefined {
  return db.prepare<[], LeaseRow>(CURRENT_SQL + lock).get();
}

/**
 * Renews this holder's lease of `epoch` at once through `aside` (`WaitLimit.keepUp`: the store's
 * second connection, outside the transaction the main thread is waiting through); false when it
 * is no longer this holder's.
 */
export function renewLeaseAside(aside: AsideStatement, holder: string, epoch: number, leaseMs: number): boolean {
  return aside(RENEW_SQL, { holder, epoch, leaseMs }).length > 0;
}

/** The holder of a lease in the words of the runner lease's refusal (`LeaseHeldError`): a daemon, its pid and host. */
export function leaseHolderOf(row: LeaseRow, now: number): LeaseHolder {
  const m = /^([0-9a-f]+)@(.*)\/(\d+)$/.exec(row.holder);
  return {
    id: m?.[1] ?? row.holder,
    command: 'run',
    pid: Number(m?.[3] ?? 0),
    host: m?.[2] ?? '?',
    started: 0,
    until: now + row.leftMs,
  };
}

/** The leader lease (see the file's comment). */
export class LeaderLease {
  readonly holder: string;
  readonly #connection = new ReconnectingClient(() => this.#newClient());
  #created = false;
  #closed = false;

  constructor(private readonly o: LeaderLeaseOptions) {
    this.holder = o.holder ?? leaseHolder();
  }

  /**
   * Takes the lease if it has expired; its new epoch, or undefined when another holds it. Only a
   * free lease is taken, under the fence's lock ({@link FENCE_LOCK_KEY}), which waits for the last
   * leader's transactions in flight (at most this connection's statement timeout: a quarter of the
   * lease; then the next attempt tries again). One statement: the lock is never held while this
   * process's event loop, which may be busy, has yet to send the next. `sending` is called just
   * before the statement that takes the lease is sent (a term's deadline counts from then).
   */
  async acquire(sending?: () => void): Promise<number | undefined> {
    const free = await this.#query<{ free: boolean }>(FREE_SQL, {});
    if (!free[0]?.free) return undefined;
    sending?.();
    const rows = await this.#query<{ epoch: string }>(FENCED_ACQUIRE_SQL, {
      holder: this.holder,
      leaseMs: this.o.leaseMs,
    });
    return rows[0] === undefined ? undefined : Number(rows[0].epoch);
  }

  /** Pushes the expiry of this holder's lease of `epoch` on; false when it is no longer this holder's. */
  async renew(epoch: number): Promise<boolean> {
    return (await this.#query(RENEW_SQL, { holder: this.holder, epoch, leaseMs: this.o.leaseMs })).length > 0;
  }

  /** Ends this holder's lease of `epoch` now; false when it was not (or no longer) this holder's. */
  async release(epoch: number): Promise<boolean> {
    return (await this.#query(RELEASE_SQL, { holder: this.holder, epoch })).length > 0;
  }

  /** The lease as the database has it now. */
  async current(): Promise<LeaseRow> {
    return (await this.#query<LeaseRow>(CURRENT_SQL, {}))[0]!;
  }

  /** Closes the connection; the lease itself is left as it is (see {@link release}). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#connection.drop();
  }

  /**
   * One statement on the lease's connection, connecting (and creating the table) first when
   * needed. A failure is a StoreError naming the URL without its password; the connection is
   * dropped with it, so the next statement starts on a fresh one.
   */
  async #query<R>(text: string, params: Record<string, unknown>): Promise<R[]> {
    if (this.#closed) throw new Error('the leader lease is closed');
    try {
      const client = await this.#connection.client();
      if (!this.#created) {
        await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${CREATE_LOCK_KEY}); ${CREATE_SQL}; COMMIT`);
        this.#created = true;
      }
      const sql = postgresPlaceholders(text);
      return (await client.query(sql.text, placeholderValues(sql, [params]))).rows as R[];
    } catch (err) {
      void this.#connection.drop();
      throw this.#failure(err);
    }
  }

  async #newClient(): Promise<pg.Client> {
    const { target, timeoutMs } = this.o;
    // Loaded here, not at start: a daemon on SQLite never leads by lease, and pg costs ~1 MB of heap.
    const { default: postgres } = await import('pg');
    return new postgres.Client({
      connectionString: target.tls ? withoutSslParameters(target.url.reveal()) : target.url.reveal(),
      ...(target.tls ? { ssl: target.tls } : {}),
      connectionTimeoutMillis: Math.min(target.connectTimeoutMs, timeoutMs),
      statement_timeout: timeoutMs,
      query_timeout: timeoutMs,
      idle_in_transaction_session_timeout: timeoutMs,
      application_name: 'deploy-watchdog leader lease',
      keepAlive: true,
    });
  }

  /** A failure as the store says it (a StoreError naming the URL without its password). */
  #failure(err: unknown): Error {
    const { message, code, severity } = pgErrorParts(err, this.o.target.url.reveal());
    const connection = severity === undefined || /^(08|57P0[123])/.test(code ?? '');
    return postgresFailure(this.o.where, { message, code, connection });
  }
}
