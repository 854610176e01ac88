/**
 * The leader lease and the fence, on a real PostgreSQL: takeover only once the lease has expired
 * on the database's clock, the epoch rising with each takeover, renewal and release by the holder
 * of the epoch only; and a leader whose lease passed on refused by the database itself (its write
 * absent), or stepping down on its own before its lease can pass when it cannot renew.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/lib/backoff.js';
import { Secret } from '../../src/lib/secret.js';
import { silentLogger, type Logger } from '../../src/lib/logger.js';
import { captureLogger } from '../app/fixtures.js';
import { FencedError } from '../../src/state/fenced-error.js';
import { LeaderElection, startBackoff, type LeaderTerm } from '../../src/state/leader-election.js';
import { FENCE_SQL, fencePrelude, LeaderLease } from '../../src/state/leader-lease.js';
import { Store } from '../../src/state/store.js';
import { replicaSeam, type ReplicaSeam } from '../../src/app/replica-role.js';
import { sharedPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

let cluster: PostgresCluster;
let url: string;
const cleanups: (() => Promise<void> | void)[] = [];

// The run's shared cluster (nothing here stops the server): a database of its own per test.
beforeAll(() => {
  cluster = sharedPostgres();
}, 120_000);
afterAll(() => cluster.close());
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A fresh database for each test, dropped after it. */
function freshDatabase(): string {
  const name = cluster.createDatabase();
  cleanups.unshift(() => cluster.dropDatabase(name));
  url = cluster.url(name);
  return url;
}

function lease(holder: string, leaseMs = 10_000, at = url): LeaderLease {
  const l = new LeaderLease({
    target: { url: new Secret(at), connectTimeoutMs: 2_000, statementTimeoutMs: 2_000 },
    where: 'postgres://test',
    leaseMs,
    timeoutMs: 2_000,
    holder,
  });
  cleanups.push(() => l.close());
  return l;
}

/**
 * A store at `at`, unfenced; or, given `seam`, as a replica's (`run`'s): every write fenced by the
 * election bound to it, every wait limited by it, and its late renewals made aside.
 */
function store(at = url, seam?: ReplicaSeam): Store {
  const s = Store.openPostgres(
    { url: new Secret(at), connectTimeoutMs: 2_000, statementTimeoutMs: 5_000 },
    seam?.options ?? {},
  );
  cleanups.push(() => s.close());
  return s;
}

/** A connection of the test's own, beside the replicas', to look at and change the database. */
async function admin(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  cleanups.push(() => c.end());
  return c;
}

async function leaseRow(c: pg.Client) {
  const r = await c.query<{ holder: string; epoch: string; live: boolean; expires_at: Date }>(
    'SELECT holder, epoch, expires_at > now() AS live, expires_at FROM leader_lease',
  );
  return { ...r.rows[0]!, epoch: Number(r.rows[0]!.epoch) };
}

/** Makes the lease expire now on the database's clock, as the passing of its time would. */
async function expire(c: pg.Client): Promise<void> {
  await c.query(`UPDATE leader_lease SET expires_at = now() - interval '1 millisecond'`);
}

// Each test makes a database of its own and opens connections through worker threads, and some
// wait out real leases of 2 s: seconds of work that a load of 25 stretched past the 30 s default.
// Their bounds are the leases' own; the tests' timeouts are only room for that work.
const ROOM = { timeout: 120_000 };

describe('leader lease', ROOM, () => {
  it('is taken when free, refused to another while it lasts, taken over only once expired on the database clock, each takeover a new epoch', async () => {
    freshDatabase();
    const a = lease('a');
    const b = lease('b');
    expect(await a.acquire()).toBe(1);
    const db = await admin();
    expect(await leaseRow(db)).toMatchObject({ holder: 'a', epoch: 1, live: true });
    // The lease lasts 10s from the server's now(): another holder's takeover is refused.
    expect(await b.acquire()).toBeUndefined();
    expect(await b.current()).toMatchObject({ holder: 'a', epoch: 1 });
    expect((await b.current()).leftMs).toBeGreaterThan(9_000);
    // Still one second left by the database's clock: refused.
    await db.query(`UPDATE leader_lease SET expires_at = now() + interval '1 second'`);
    expect(await b.acquire()).toBeUndefined();
    await expire(db);
    expect(await b.acquire()).toBe(2);
    await expire(db);
    expect(await a.acquire()).toBe(3);
    expect(await leaseRow(db)).toMatchObject({ holder: 'a', epoch: 3, live: true });
  });

  it('is renewed and released by its holder of its epoch only; a lapsed lease is never revived', async () => {
    freshDatabase();
    const a = lease('a');
    const b = lease('b');
    const db = await admin();
    const epoch = (await a.acquire())!;
    await db.query(`UPDATE leader_lease SET expires_at = now() + interval '1 second'`);
    expect(await a.renew(epoch)).toBe(true);
    expect((await a.current()).leftMs).toBeGreaterThan(9_000);
    expect(await b.renew(epoch)).toBe(false);
    expect(await a.renew(epoch + 1)).toBe(false);
    expect(await b.release(epoch)).toBe(false);
    expect(await leaseRow(db)).toMatchObject({ holder: 'a', live: true });

    // Expired, not yet taken: the old holder cannot renew it back.
    await expire(db);
    expect(await a.renew(epoch)).toBe(false);
    const next = (await b.acquire())!;
    expect(next).toBe(epoch + 1);
    expect(await a.renew(epoch)).toBe(false);

    // Released: the next attempt of another takes it at once.
    expect(await b.release(next)).toBe(true);
    expect(await leaseRow(db)).toMatchObject({ holder: 'b', live: false });
    expect(await a.acquire()).toBe(next + 1);
  });

  it("is renewed while the leader's fenced transaction is open, and taken over only once it has ended", async () => {
    freshDatabase();
    const a = lease('a', 2_000);
    const b = lease('b', 2_000);
    const epoch = (await a.acquire())!;
    // The leader's work, stuck in the middle of a fenced transaction (its client gone quiet).
    const work = await admin();
    await work.query('BEGIN');
    await work.query(fencePrelude({ lockMs: 500, statementMs: 1_000, idleMs: 30_000 }));
    const fenced = await work.query(FENCE_SQL.replace('?', `'a'`).replace('?', String(epoch)));
    expect(fenced.rows).toHaveLength(1);
    // The renewal waits on nothing the work holds (it used to wait for the transaction: FOR SHARE on the row).
    // A renewal that waited would be cut at its 2 s timeout and say false; one that did not
    // answers well within that, even on a loaded machine.
    const renewing = performance.now();
    expect(await a.renew(epoch)).toBe(true);
    expect(performance.now() - renewing).toBeLessThan(2_000);
    // Expired: a takeover waits for the transaction of the last epoch, at most its statement timeout (2s here)…
    const db = await admin();
    await expire(db);
    await expect(b.acquire()).rejects.toMatchObject({ name: 'StoreError' });
    expect(await leaseRow(db)).toMatchObject({ holder: 'a', epoch });
    // …and takes the lease once it has ended; a fence of the old epoch finds nothing after.
    await work.query('COMMIT');
    expect(await b.acquire()).toBe(epoch + 1);
    await work.query('BEGIN');
    await work.query(fencePrelude({ lockMs: 500, statementMs: 1_000, idleMs: 30_000 }));
    expect((await work.query(FENCE_SQL.replace('?', `'a'`).replace('?', String(epoch)))).rows).toEqual([]);
    await work.query('ROLLBACK');
  });

  it('ends a fenced transaction whose client went quiet at its idle timeout, so a takeover does not wait for it', async () => {
    freshDatabase();
    const a = lease('a', 2_000);
    const b = lease('b', 2_000);
    const epoch = (await a.acquire())!;
    const work = new pg.Client({ connectionString: url });
    await work.connect();
    work.on('error', () => undefined);
    cleanups.push(() => work.end().catch(() => undefined));
    await work.query('BEGIN');
    await work.query(fencePrelude({ lockMs: 500, statementMs: 1_000, idleMs: 1_000 }));
    await work.query(FENCE_SQL.replace('?', `'a'`).replace('?', String(epoch)));
    await expire(await admin());
    const started = performance.now();
    let taken: number | undefined;
    while (taken === undefined && performance.now() - started < 10_000)
      taken = await b.acquire().catch(() => undefined);
    expect(taken).toBe(epoch + 1);
  });

  it('creates its table once when replicas start together', async () => {
    freshDatabase();
    const leases = ['a', 'b', 'c', 'd'].map((h) => lease(h));
    const epochs = await Promise.all(leases.map((l) => l.acquire()));
    expect(epochs.filter((e) => e !== undefined)).toEqual([1]);
  });

  it('fails with a StoreError naming the URL without its password when the server cannot be reached', async () => {
    const proxy = await startTcpProxy(cluster.port);
    cleanups.push(() => proxy.close());
    await proxy.cut();
    const l = new LeaderLease({
      target: {
        url: new Secret(proxy.via(cluster.url('postgres'))),
        connectTimeoutMs: 1_000,
        statementTimeoutMs: 1_000,
      },
      where: 'postgres://watchdog@127.0.0.1/postgres',
      leaseMs: 2_000,
      timeoutMs: 1_000,
    });
    cleanups.push(() => l.close());
    const err = await l.acquire().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StoreError', reason: 'unreachable' });
    expect(String((err as Error).message)).not.toContain(cluster.password);
  });
});

/** A replica: a store at `at` fenced by an election on `l` whose terms and step-downs the test can wait for. */
function election(l: LeaderLease, leaseMs: number, at = url, logger: Logger = silentLogger) {
  const seam = replicaSeam();
  const s = store(at, seam);
  const terms: LeaderTerm[] = [];
  const deposed: { reason: string; at: number; wall: number }[] = [];
  const roles: boolean[] = [];
  const e = new LeaderElection({
    lease: l,
    leaseMs,
    logger,
    onElected: async (term) => {
      terms.push(term);
    },
    onDeposed: async (reason) => {
      deposed.push({ reason, at: performance.now(), wall: Date.now() });
    },
    onRole: (leading) => roles.push(leading),
  });
  // Told before each wait of a transaction: the front door's heartbeat, in the daemon.
  const progress = { beats: 0 };
  seam.bind(e, () => (progress.beats += 1));
  cleanups.push(() => e.close());
  return { e, s, terms, deposed, roles, progress };
}

/** Replica `a`, leading on a lease of `leaseMs`, and an unfenced store beside it to look at the database synchronously. */
async function leaderAndLook(leaseMs: number, logger?: Logger) {
  const a = election(lease('a', leaseMs), leaseMs, url, logger);
  a.e.start();
  await until(() => a.terms.length === 1);
  return { a, look: store() };
}

/** Waits for an event; the bound is only where a broken build gives up, generous for a loaded machine. */
async function until(what: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('leader election and the fence', ROOM, () => {
  it('refuses, in the database, a write of a leader whose lease has passed on; the leader steps down', async () => {
    freshDatabase();
    const { e, s, terms, deposed, roles } = election(lease('a', 10_000), 10_000);
    e.start();
    await until(() => terms.length === 1);
    expect(e.status).toMatchObject({ role: 'leader', epoch: 1 });
    s.transaction(() => s.setMeta('written', 'by epoch 1'));
    // The transaction carried its epoch for the database to see.
    expect(
      s.transaction(
        () => s.db.prepare<[], { e: string }>(`SELECT current_setting('deploy_watchdog.epoch') AS e`).get()!.e,
      ),
    ).toBe('1');

    // Behind its back (it was cut off, its clock stalled), another replica took the lease.
    const db = await admin();
    await db.query(`UPDATE leader_lease SET holder = 'b', epoch = 2, expires_at = now() + interval '1 minute'`);
    const err = (() => {
      try {
        s.transaction(() => s.setMeta('stale', 'by epoch 1'));
      } catch (caught) {
        return caught;
      }
    })();
    expect(err).toBeInstanceOf(FencedError);
    expect((err as FencedError).reason).toMatch(/the lease of epoch 1 is no longer this replica's/);
    const rows = await db.query(`SELECT key, value FROM meta WHERE key IN ('written', 'stale') ORDER BY key`);
    expect(rows.rows).toEqual([{ key: 'written', value: 'by epoch 1' }]);

    await until(() => terms[0]!.signal.aborted);
    await until(() => deposed.length === 1);
    expect(deposed[0]!.reason).toMatch(/database refused a write/);
    expect(roles).toEqual([true, false]);
    // A follower again: it writes as any replica's console does, unfenced, and does not take the live lease.
    await until(() => e.status.role === 'follower' && e.status.holder === 'b');
    s.transaction(() => s.setMeta('console', 'a follower'));
    expect(await leaseRow(db)).toMatchObject({ holder: 'b', epoch: 2 });
  });

  it('cut off from the database, the leader stops acting before its lease expires; the follower takes over after', async () => {
    freshDatabase();
    const proxy = await startTcpProxy(cluster.port);
    cleanups.push(() => proxy.close());
    // 8 s, not 2: the renewals run on the wall clock, and at a load of 10 a 2 s lease's renewal
    // missed its 1.5 s before the cut (b took over before the test could cut a off).
    const leaseMs = 8_000;
    const viaProxy = proxy.via(url);
    const a = election(lease('a', leaseMs, viaProxy), leaseMs, viaProxy);
    a.e.start();
    await until(() => a.terms.length === 1);
    const b = election(lease('b', leaseMs), leaseMs);
    b.e.start();
    await until(() => b.e.status.holder === a.e.holder);

    const db = await admin();
    await proxy.cut();
    await until(() => a.deposed.length === 1);
    const steppedDownAt = a.deposed[0]!.wall;
    expect(a.deposed[0]!.reason).toMatch(/could not be renewed within 6000ms/);
    // The lease it held was still its own in the database when it stopped acting.
    const held = await leaseRow(db);
    expect(held).toMatchObject({ holder: 'a', epoch: 1 });
    expect(held.expires_at.getTime()).toBeGreaterThan(steppedDownAt);

    await until(() => b.terms.length === 1);
    expect(b.terms[0]!.epoch).toBe(2);
    const taken = await leaseRow(db);
    expect(taken).toMatchObject({ holder: 'b', epoch: 2 });

    // Back on the network, the old leader follows: its writes as a leader would be refused, and it does not take the lease.
    await proxy.restore();
    await until(() => a.e.status.reached && a.e.status.holder === b.e.holder);
    expect(a.e.status).toMatchObject({ role: 'follower', epoch: 2 });
    expect(a.terms).toHaveLength(1);
  });

  it('keeps its lease through a transaction longer than the lease, renewed aside while the transaction makes progress', async () => {
    freshDatabase();
    // 6 s: a renewal aside is due 2.25 s after the last, the deadline 4.5 s after it, so a loaded
    // machine has 2.25 s between two statements of the transaction.
    const leaseMs = 6_000;
    const { a, look } = await leaderAndLook(leaseMs);
    const left: number[] = [];
    const started = performance.now();
    // The main thread waits through the whole transaction: none of its timers (the renewals) runs.
    a.s.transaction(() => {
      a.s.setMeta('storm', 'begun');
      // For 1.5 leases: past the leader's deadline (¾ of one), and past the lease's own expiry on
      // the server, had nothing renewed it.
      while (performance.now() - started < 1.5 * leaseMs) {
        a.s.db.prepare('SELECT pg_sleep(0.05)').get();
        left.push(
          look.db
            .prepare<[], { ms: number }>('SELECT extract(epoch FROM expires_at - now()) * 1000 AS ms FROM leader_lease')
            .get()!.ms,
        );
      }
      a.s.setMeta('storm', 'committed');
    });
    expect(performance.now() - started).toBeGreaterThan(leaseMs);
    expect(a.s.getMeta('storm')).toBe('committed');
    expect(a.deposed).toEqual([]);
    expect(a.e.status).toMatchObject({ role: 'leader', epoch: 1 });
    // The lease never lapsed on the server's clock, so no follower could have taken it meanwhile.
    expect(Math.min(...left)).toBeGreaterThan(0);
    // And the transaction's progress was told at each of its waits (it beats /healthz in the daemon).
    expect(a.progress.beats).toBeGreaterThanOrEqual(left.length);
  });

  it('steps down in the middle of a transaction when a renewal aside finds the lease taken; nothing of it is written', async () => {
    freshDatabase();
    const leaseMs = 4_000;
    const { a, look } = await leaderAndLook(leaseMs);
    const started = performance.now();
    const err = (() => {
      try {
        a.s.transaction(() => {
          a.s.setMeta('lost', 'written by epoch 1');
          // Behind its back, another replica took the lease (its clock stalled, say).
          look.db
            .prepare(`UPDATE leader_lease SET holder = 'b', epoch = 2, expires_at = now() + interval '1 minute'`)
            .run();
          while (performance.now() - started < 3 * leaseMs) a.s.db.prepare('SELECT pg_sleep(0.05)').get();
        });
      } catch (caught) {
        return caught;
      }
    })();
    expect(err).toBeInstanceOf(FencedError);
    // The renewal aside said so, before the deadline would have cut the transaction.
    expect((err as FencedError).reason).toMatch(/the lease of epoch 1 is no longer this replica's/);
    expect(look.getMeta('lost')).toBeUndefined();
    await until(() => a.deposed.length === 1);
    expect(a.deposed[0]!.reason).toMatch(/no longer this replica's/);
  });

  it('steps down at its deadline when the renewal aside cannot connect, and writes nothing of the transaction', async () => {
    freshDatabase();
    const leaseMs = 4_000;
    const log = captureLogger('warn');
    const { a, look } = await leaderAndLook(leaseMs, log.logger);
    // The transaction's own connection is open already; from now no new one is let in (a server at
    // its connection limit, say), so the renewal aside cannot be made. Asked from another database:
    // one cannot close itself.
    const server = new pg.Client({ connectionString: cluster.url('postgres') });
    await server.connect();
    cleanups.push(() => server.end());
    const closeTo = (allow: boolean) =>
      server.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" ALLOW_CONNECTIONS ${allow}`);
    await closeTo(false);
    const started = performance.now();
    const err = (() => {
      try {
        a.s.transaction(() => {
          a.s.setMeta('stranded', 'written by epoch 1');
          while (performance.now() - started < 3 * leaseMs) a.s.db.prepare('SELECT pg_sleep(0.05)').get();
        });
      } catch (caught) {
        return caught;
      }
    })();
    await closeTo(true);
    expect(err).toBeInstanceOf(FencedError);
    // Cut at the deadline (¾ of the lease after the last renewal), as any wait past it is.
    expect((err as FencedError).reason).toMatch(/could not be renewed within 3000ms/);
    expect(log.text()).toContain('cannot renew the leader lease during the transaction');
    expect(log.text()).not.toContain(cluster.password);
    expect(look.getMeta('stranded')).toBeUndefined();
    await until(() => a.deposed.length === 1);
  });

  it('releases the lease at close, so a follower takes over at its next attempt', async () => {
    freshDatabase();
    // Long enough that the bound below leaves a loaded machine 10 s of room and is still well
    // short of the lease's expiry, which would hand the lease over without any release.
    const leaseMs = 20_000;
    const a = election(lease('a', leaseMs), leaseMs);
    a.e.start();
    await until(() => a.terms.length === 1);
    const b = election(lease('b', leaseMs), leaseMs);
    b.e.start();
    await until(() => b.e.status.holder === a.e.holder);
    await a.e.close();
    expect(a.terms[0]!.signal.aborted).toBe(true);
    const db = await admin();
    expect(await leaseRow(db)).toMatchObject({ holder: 'a', live: false });
    // Long before the 20s lease would have expired: at the follower's next attempt.
    await until(() => b.terms.length === 1, leaseMs / 4 + 10_000);
    expect(b.terms[0]!.epoch).toBe(2);
  });
});

describe('after a term that could not start', () => {
  it.each([
    // failures in a row, random draw, the wait in leases
    [1, 0, 0.25],
    [1, 1, 0.5],
    [2, 1, 1],
    [3, 0.5, 1.5],
    [4, 1, 4],
    [9, 1, 4],
    [9, 0, 2],
  ])('after %i failed starts (draw %f) waits %f leases', (failures, draw, leases) => {
    expect(backoffDelay(failures, { ...startBackoff(10_000), random: () => draw })).toBe(leases * 10_000);
  });
});
