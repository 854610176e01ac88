/**
 * Which replica leads, over the {@link LeaderLease} of a PostgreSQL state: a follower tries to take
 * the lease every quarter of it; the leader renews it as often; whoever leads does the work
 * (cycles, delivery, remediation, context reads, retention), the others serve the console and
 * their probes. Wall-clock and monotonic time, not the daemon's injected clock: the lease is
 * between processes, not inside one's test clock.
 *
 * A leader stops acting BEFORE its lease can pass to another. It keeps a local deadline on the
 * monotonic clock: the start of its last successful renewal + lease − margin (a quarter of the
 * lease). The database's expiry is at least a whole lease after that start (the renewal ran after
 * it and adds the lease to the server's time then), so the deadline passes a quarter of a lease
 * before any follower can take over. When it passes, or a renewal says the lease is another's, or
 * a write is fenced out, the leader steps down at once: every write of its work is refused from
 * that moment ({@link FencedError}), its term's signal aborts (the cycle in flight writes
 * nothing), its work is stopped, and its lease is released if it still holds it.
 *
 * Fencing is the database's: {@link LeaderElection.fence} is the store's write guard
 * (`StoreOptions.writeGuard`). While this process leads, every outermost transaction of the store
 * first runs `FENCE_SQL` on the store's connection, so a write is taken only while this holder's
 * lease of its epoch lasts, and a takeover waits for a fenced transaction to end. The local
 * deadline is also checked there, without asking the server, for a main thread that was blocked
 * past it. While it follows, the guard lets every write through (the console's, on any replica);
 * while it steps down, it refuses them all.
 *
 * The renewals run on the main thread's timers, which cannot fire while it waits through a long
 * transaction (a storm's cycle on PostgreSQL takes seconds). So the store asks before each wait
 * inside one (`WaitLimit.keepUp`), and a renewal that is late is made there, aside, on a second
 * connection: a transaction that keeps making progress keeps its lease.
 */
import { performance } from 'node:perf_hooks';
import { Backoff, type BackoffPolicy } from '../lib/backoff.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { FencedError } from './fenced-error.js';
import { renewLeaseAside, type FenceTimeouts, type LeaderLease } from './leader-lease.js';
import type { AsideStatement } from './postgres-database.js';
import { writeFence, type WriteFence } from './write-fence.js';
import type { SqlDatabase } from './sql-database.js';

/** One term of leadership: its epoch, and a signal that aborts the moment it ends. */
export interface LeaderTerm {
  epoch: number;
  signal: AbortSignal;
}

/** What {@link LeaderElection.status} says: this process's role and what it knows of the lease. */
export interface ElectionStatus {
  role: 'leader' | 'follower';
  /** The epoch this process leads under, or the one it last saw another lead under (null: none seen). */
  epoch: number | null;
  /** Who leads as last seen (this process's holder name when it leads); null when nobody does. */
  holder: string | null;
  /** The last statement on the lease reached the database. */
  reached: boolean;
  /** In words, for `/readyz`: "leading (epoch 4)", "following epoch 3 of …", "cannot reach the lease: …". */
  detail: string;
  /** What the write guard does now, for a store on another thread (the console's): `write-fence.ts`. */
  fence: WriteFence;
}

/** Options of {@link LeaderElection}. */
export interface LeaderElectionOptions {
  lease: LeaderLease;
  /** `state.leader.lease`. */
  leaseMs: number;
  logger: Logger;
  /**
   * This process leads from now: start the leader's work. Steps down wait for it to resolve (a
   * term never stops before it has started); renewals do not.
   */
  onElected: (term: LeaderTerm) => Promise<void>;
  /** This process no longer leads (the term's signal has aborted): stop the leader's work; resolves once stopped. */
  onDeposed: (reason: string) => Promise<void>;
  /** Told when this replica, following, sees another lead under a new epoch (said as `following`). */
  onFollowing?: (epoch: number) => void;
  /** Told at every change of role (the `deploy_watchdog_leader` gauge). */
  onRole?: (leading: boolean) => void;
  /** The jitter of a follower's backoff while the lease cannot be reached (uniform in [0, 1)); default Math.random. */
  random?: () => number;
  /**
   * Whether this replica's own state connection works now (the store's `SELECT 1`), asked before
   * it takes a free lease: a replica whose work would fail at once must not lead, or the lease
   * passes from one to the next as each fails to start. Absent: it can.
   */
  canLead?: () => boolean;
  /** `state.statement_timeout`: the leader's statements get the shorter of it and half a lease. */
  statementTimeoutMs?: number;
}

/** The time between two attempts (renewals, or a follower's takeovers), as a share of the lease. */
const ATTEMPTS_PER_LEASE = 4;
/**
 * How many attempts' time after the last renewal one is made aside ({@link LeaderElection.keepUp}):
 * half an attempt after the timer's was due, a whole attempt before the deadline.
 */
const ASIDE_LATE = 1.5;
/** After a term that could not start, the next attempt waits this many leases, doubling up to {@link START_BACKOFF_MAX}. */
const START_BACKOFF_MIN = 0.5;
const START_BACKOFF_MAX = 4;

/**
 * The wait after failed starts in a row: the loops' backoff (`lib/backoff.ts`), in leases, with
 * jitter taking off up to half of it.
 */
export function startBackoff(leaseMs: number): BackoffPolicy {
  return { baseMs: leaseMs * START_BACKOFF_MIN, capMs: leaseMs * START_BACKOFF_MAX, jitter: 0.5 };
}

/** Why a leader steps down when a renewal finds its lease another's. */
function notHeld(epoch: number): string {
  return `the lease of epoch ${epoch} is no longer this replica's`;
}

/** The leader election of one process (see the file's comment). */
export class LeaderElection {
  readonly #log: Logger;
  readonly #intervalMs: number;
  /** A follower's attempts while the lease cannot be reached (`lib/backoff.ts`). */
  readonly #backoff: Backoff;
  /** Also what the write guard does: nothing (following), the fence (leading), refuse (stepping down). */
  #role: 'follower' | 'leader' | 'stepping-down' = 'follower';
  #term: { epoch: number; controller: AbortController } | undefined;
  /** performance.now() past which the leader stops acting. */
  #deadline = 0;
  /** performance.now() when the renewal (or takeover) the deadline counts from started. */
  #renewedAt = -Infinity;
  /** performance.now() before which no renewal aside is tried again after one failed. */
  #asideNotBefore = 0;
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #tickTimer: ReturnType<typeof setTimeout> | undefined;
  #tick: Promise<void> | undefined;
  /** Elections and step-downs, one after the other: a term starts only once the last has stopped. */
  #transitions: Promise<void> = Promise.resolve();
  #retired = false;
  #closed = false;
  #refusal = '';
  /** The fence's statements, as a store on another thread runs them too. */
  readonly #fenceGuard = writeFence(() => this.#writeFence());
  /** What the last attempt learnt: the leader seen, or the failure. */
  #seen: { holder: string | null; epoch: number | null } = { holder: null, epoch: null };
  #failure: string | undefined;
  /** Terms in a row whose work could not start (their backoff), and performance.now() before which no new one is taken. */
  readonly #startBackoff: Backoff;
  #notBefore = 0;
  /** Why the state connection kept this replica from taking a free lease, said once per spell. */
  #cannotLead = false;
  readonly #timeouts: FenceTimeouts;

  constructor(private readonly o: LeaderElectionOptions) {
    this.#log = o.logger.child({ stage: 'leader' });
    this.#intervalMs = Math.max(1, Math.floor(o.leaseMs / ATTEMPTS_PER_LEASE));
    this.#backoff = new Backoff({ baseMs: this.#intervalMs, capMs: o.leaseMs, random: o.random });
    this.#startBackoff = new Backoff(startBackoff(o.leaseMs));
    // Whatever the leader's transaction holds on the server is let go of before the lease can pass.
    const half = o.leaseMs / 2;
    this.#timeouts = {
      lockMs: this.#intervalMs,
      statementMs: Math.min(o.statementTimeoutMs ?? half, half),
      idleMs: half,
    };
  }

  /** This process's holder name in the lease. */
  get holder(): string {
    return this.o.lease.holder;
  }

  /** This process's role and what it knows of the lease. */
  get status(): ElectionStatus {
    const leading = this.#role === 'leader';
    // A leader has seen itself lead (`hold`).
    const { epoch, holder } = this.#seen;
    const detail =
      this.#failure !== undefined
        ? `cannot reach the leader lease: ${this.#failure}`
        : leading
          ? `leading (epoch ${epoch})`
          : holder
            ? `following ${holder} (epoch ${epoch})`
            : 'following: no replica leads now';
    const reached = this.#failure === undefined;
    return { role: leading ? 'leader' : 'follower', epoch, holder, reached, detail, fence: this.#writeFence() };
  }

  /** The write guard's state as data (see {@link fence}). */
  #writeFence(): WriteFence {
    const term = this.#term;
    if (this.#role === 'follower') return { mode: 'open' };
    if (this.#role === 'stepping-down' || !term)
      return { mode: 'refuse', reason: this.#refusal || 'this replica is stepping down' };
    const deadlineAt = performance.timeOrigin + this.#deadline;
    return { mode: 'fence', holder: this.holder, epoch: term.epoch, deadlineAt, timeouts: this.#timeouts };
  }

  /** Starts following (the first attempt to lead is made at once), or renewing a term already held ({@link hold}). */
  start(): void {
    if (this.#tickTimer !== undefined || this.#tick !== undefined || this.#closed) return;
    if (this.#role === 'follower') {
      this.#log.info({ holder: this.holder, leaseMs: this.o.leaseMs }, 'following; leads when the lease is free');
    }
    this.#schedule(this.#role === 'follower' ? 0 : this.#intervalMs);
  }

  /**
   * Leads from now, under `epoch` taken at `started` (performance.now() before the statement): the
   * term. Taken by the election, or outside it (`check`, synchronously through the store:
   * `takeLeaseNow`): from now on it is fenced, renewed once {@link start}ed, and stepped down from
   * as any term. `onElected` is not called here: for a term taken outside, the caller has it.
   */
  hold(epoch: number, started: number): LeaderTerm {
    const controller = new AbortController();
    this.#term = { epoch, controller };
    this.#role = 'leader';
    this.#see(this.holder, epoch);
    this.#renewedAt = -Infinity;
    this.#extend(started);
    this.o.onRole?.(true);
    this.#log.info({ epoch, holder: this.holder }, `became leader (epoch ${epoch})`);
    return { epoch, signal: controller.signal };
  }
  /** No new term from now (the process is stopping); a leader keeps renewing until {@link close}. */
  retire(): void {
    this.#retired = true;
  }

  /**
   * Ends the election: no more attempts; a term still held is released in the database (so a
   * follower takes over at its next attempt) once the caller has stopped the leader's work; the
   * lease's connection closes. Waits for a step-down under way.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#retired = true;
    this.#closed = true;
    clearTimeout(this.#tickTimer);
    await this.#tick;
    await this.#transitions;
    const term = this.#term;
    if (term && this.#role === 'leader') {
      clearTimeout(this.#deadlineTimer);
      this.#term = undefined;
      this.#role = 'stepping-down';
      this.o.onRole?.(false);
      term.controller.abort(new FencedError('stopping'));
      this.#role = 'follower';
      let released = false;
      try {
        released = await this.o.lease.release(term.epoch);
      } catch (err) {
        this.#log.warn({ err: errorText(err) }, 'cannot release the leader lease; it expires by itself');
      }
      this.#log.info({ epoch: term.epoch, released }, 'stepped down: stopping');
    }
    await this.o.lease.close();
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    this.#tickTimer = setTimeout(() => {
      this.#tickTimer = undefined;
      const started = performance.now();
      this.#tick = this.#attempt(started).finally(() => {
        this.#tick = undefined;
        // A follower that cannot reach the lease backs off (up to a lease); a leader renews on time.
        if (this.#role === 'follower' && this.#failure !== undefined) return this.#schedule(this.#backoff.failed());
        this.#backoff.reset();
        this.#schedule(Math.max(0, started + this.#intervalMs - performance.now()));
      });
    }, delayMs);
  }

  /** One attempt: a leader renews, a follower tries to take the lease; nothing while stepping down. */
  async #attempt(started: number): Promise<void> {
    if (this.#role === 'leader') return this.#renew(started);
    if (this.#role === 'follower' && !this.#retired) return this.#campaign();
  }

  async #campaign(): Promise<void> {
    let epoch: number | undefined;
    // The term's deadline counts from before the statement that takes the lease, not before the checks ahead of it.
    let started = 0;
    try {
      const row = await this.o.lease.current();
      this.#reached();
      if (row.leftMs > 0) {
        this.#see(row.holder, row.epoch);
        return;
      }
      this.#see(null, row.epoch);
      if (performance.now() < this.#notBefore || !this.#stateWorks()) return;
      started = performance.now();
      epoch = await this.o.lease.acquire(() => (started = performance.now()));
      if (epoch === undefined) return;
    } catch (err) {
      this.#unreached(err);
      return;
    }
    // Closed or retired while asking: the lease just taken is given back at once.
    if (this.#retired) {
      await this.o.lease.release(epoch).catch(() => undefined);
      return;
    }
    this.#elect(epoch, started);
  }

  /** {@link LeaderElectionOptions.canLead}, its failure said once per spell. */
  #stateWorks(): boolean {
    const works = this.o.canLead?.() ?? true;
    if (!works && !this.#cannotLead) {
      this.#log.warn("the lease is free, but this replica's state connection does not answer: not taking it");
    }
    this.#cannotLead = !works;
    return works;
  }

  async #renew(started: number): Promise<void> {
    const term = this.#term!;
    let held: boolean;
    try {
      held = await this.o.lease.renew(term.epoch);
    } catch (err) {
      // The deadline's timer steps down when it passes; until then the next attempt may succeed.
      this.#unreached(err);
      return;
    }
    this.#reached();
    if (this.#term !== term || this.#role !== 'leader') return;
    if (!held) {
      this.#stepDown(notHeld(term.epoch));
      return;
    }
    this.#extend(started);
  }

  #elect(epoch: number, started: number): void {
    const term = this.hold(epoch, started);
    this.#transitions = this.#transitions.then(() =>
      this.o.onElected(term).then(
        () => {
          if (!term.signal.aborted) this.#startBackoff.reset();
        },
        (err: unknown) => {
          if (err instanceof FencedError || term.signal.aborted) return;
          // Not at once again: the next term would most likely fail the same way.
          const waitMs = this.#startBackoff.failed();
          this.#notBefore = performance.now() + waitMs;
          this.#stepDown(`the leader's work could not start: ${errorText(err)}`);
          this.#log.info({ waitMs: Math.round(waitMs) }, 'takes no lease again for a while');
        },
      ),
    );
  }

  /**
   * The local deadline after a renewal (or the takeover) that started at `started`. Only ever later:
   * a renewal aside ({@link keepUp}) may have started after the one that answers now.
   */
  #extend(started: number): void {
    const margin = this.o.leaseMs / ATTEMPTS_PER_LEASE;
    if (started <= this.#renewedAt) return;
    this.#renewedAt = started;
    this.#deadline = started + this.o.leaseMs - margin;
    clearTimeout(this.#deadlineTimer);
    const term = this.#term!;
    this.#deadlineTimer = setTimeout(
      () => {
        if (this.#term === term && this.#role === 'leader') this.#stepDown(this.#deadlinePassed());
      },
      Math.max(0, this.#deadline - performance.now()),
    );
  }

  #deadlinePassed(): string {
    return `the lease could not be renewed within ${Math.round(this.o.leaseMs - this.o.leaseMs / ATTEMPTS_PER_LEASE)}ms`;
  }

  /**
   * How long the main thread may still wait for the store's PostgreSQL (`StoreOptions.waitLimit`):
   * while leading, until the local deadline, so that no statement, however stuck, keeps the leader
   * acting past it; otherwise no limit of the lease's.
   */
  waitLeftMs(): number | undefined {
    if (this.#role !== 'leader') return undefined;
    return this.#deadline - performance.now();
  }

  /**
   * Before each wait of the store inside a transaction (`WaitLimit.keepUp`): while the main thread
   * waits through a long one (a storm's cycle), its timers cannot renew the lease, so it is renewed
   * here, aside, once the timer's renewal is half an attempt late; the deadline moves on as after
   * any renewal. So a leader whose transaction keeps making progress keeps its lease, and one whose
   * main thread is stuck does not. A lease no longer this replica's steps down and throws
   * {@link FencedError}, which ends the transaction. A renewal that fails leaves the deadline where
   * it was (it cuts the transaction when it passes), and the next is tried a quarter of an attempt on.
   */
  keepUp(aside: AsideStatement): void {
    if (this.#role !== 'leader') return;
    const started = performance.now();
    if (started < this.#renewedAt + this.#intervalMs * ASIDE_LATE || started < this.#asideNotBefore) return;
    const term = this.#term!;
    let held: boolean;
    try {
      held = renewLeaseAside(aside, this.holder, term.epoch, this.o.leaseMs);
    } catch (err) {
      if (err instanceof FencedError) throw err;
      this.#asideNotBefore = performance.now() + this.#intervalMs / 4;
      this.#log.warn({ err: errorText(err) }, 'cannot renew the leader lease during the transaction');
      return;
    }
    if (!held) {
      this.#stepDown(notHeld(term.epoch));
      throw new FencedError(notHeld(term.epoch));
    }
    this.#extend(started);
    this.#log.debug({ epoch: term.epoch }, 'renewed the leader lease during a long transaction');
  }

  /** A wait of the store was cut at the deadline ({@link waitLeftMs}): steps down now; the error for the statement. */
  waitExceeded(): FencedError {
    const reason = this.#deadlinePassed();
    this.#stepDown(reason);
    return new FencedError(reason);
  }

  /**
   * The store's write guard (`StoreOptions.writeGuard`), run first in every outermost transaction
   * on `db`: see the file's comment. Throws {@link FencedError} for a write this process may not make.
   */
  fence(db: SqlDatabase): void {
    if (this.#role === 'leader' && performance.now() >= this.#deadline) throw this.waitExceeded();
    try {
      this.#fenceGuard(db);
    } catch (err) {
      if (this.#role === 'leader' && err instanceof FencedError) this.#stepDown(err.reason);
      throw err;
    }
  }

  /**
   * Stops acting now: writes refused from this moment, the term's signal aborted (after the
   * current synchronous work, which may be the fenced transaction itself), then the leader's work
   * stopped and the lease released if still held.
   */
  #stepDown(reason: string): void {
    const term = this.#term;
    if (!term || this.#role !== 'leader') return;
    this.#role = 'stepping-down';
    clearTimeout(this.#deadlineTimer);
    this.#refusal = `stepping down: ${reason}`;
    this.o.onRole?.(false);
    this.#log.info({ epoch: term.epoch, reason }, `stepped down: ${reason}`);
    queueMicrotask(() => term.controller.abort(new FencedError(reason)));
    this.#transitions = this.#transitions.then(async () => {
      try {
        await this.o.onDeposed(reason);
      } catch (err) {
        this.#log.error({ err: errorText(err) }, 'stopping the leader work failed');
      }
      this.#term = undefined;
      this.#role = 'follower';
      // Still ours (the deadline passed on a slow answer, a start failed): a follower need not wait for it to expire.
      await this.o.lease.release(term.epoch).catch(() => undefined);
    });
  }

  /** A follower saw who leads: said once per change. */
  #see(holder: string | null, epoch: number): void {
    if (this.#seen.holder === holder && this.#seen.epoch === epoch) return;
    this.#seen = { holder, epoch };
    if (holder !== null && holder !== this.holder) {
      this.#log.info({ leader: holder, epoch }, 'following');
      this.o.onFollowing?.(epoch);
    }
  }

  #reached(): void {
    if (this.#failure !== undefined) this.#log.info('the leader lease is reachable again');
    this.#failure = undefined;
  }

  #unreached(err: unknown): void {
    const failure = errorText(err);
    if (this.#failure === undefined) this.#log.warn({ err: failure }, 'cannot reach the leader lease');
    this.#failure = failure;
  }
}
