/**
 * Who runs on a state file now: one `run`, one `check` or one `migrate-state` at a time.
 *
 * Two processes working one state file each deliver what the outbox holds, so the same message
 * goes out twice (a `check` started beside the daemon sent it three times in a trial). The one that
 * holds this lease (a row of `meta`) works; another is refused with words that say who holds it.
 * The holder renews it while it runs and gives it up when it stops; one killed leaves it to expire
 * after {@link LEASE_TTL_MS}, or at once to its own restart on the same host (its pid no longer
 * alive; or, in a container where the daemon is pid 1 again, the same pid with another start time).
 * Its term is on the wall clock between hosts and on the monotonic clock within one host's boot: the
 * lease is between processes, not inside one's test clock.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Store, StoreOptions } from './store.js';

/** How long a lease lasts unless renewed; the holder renews it three times as often. */
export const LEASE_TTL_MS = 30_000;

const KEY = 'runner_lease';

/** The holder of a lease. */
export interface LeaseHolder {
  /** Random, per process: tells a lease of one's own from another's. */
  id: string;
  command: 'run' | 'check' | 'migrate-state';
  pid: number;
  host: string;
  /** When its process started (epoch ms): a pid of this host is the same process only with the same start. */
  started: number;
  /** Epoch ms it lasts until. */
  until: number;
  /** This host's boot and the monotonic ms it lasts until: on the host of the same boot, what decides. */
  boot?: string;
  monotonicUntil?: number;
}

/**
 * This host's boot (Linux), so that a monotonic time is compared only with one of the same clock:
 * a wall clock stepped forward (NTP, a VM resumed) must not end a living holder's lease early.
 */
const BOOT = (() => {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
})();

/** Why the lease of a `run` or `check` keeps out what `wanted` would do, and what to do instead. */
const HELD_BECAUSE: Record<LeaseHolder['command'], string> = {
  check: 'a check now would send what it sends twice. See what it found with `alerts`, or stop it first',
  run: 'a second daemon would send every message twice. Stop it first, or give this one its own state.path',
  'migrate-state': `a copy now would leave out what it writes from now on. Stop it first (one killed on another host leaves the file after ${LEASE_TTL_MS / 1000} s)`,
};

/** Another process holds the state file. */
export class LeaseHeldError extends Error {
  override readonly name = 'LeaseHeldError';
  constructor(
    readonly holder: LeaseHolder,
    wanted: LeaseHolder['command'],
  ) {
    super(
      `deploy-watchdog ${holder.command} (pid ${holder.pid} on ${holder.host}) is working on this state file; ` +
        (holder.command === 'migrate-state'
          ? 'it is copying the state to PostgreSQL. Wait until it is done, then start the daemon on state.url'
          : HELD_BECAUSE[wanted]),
    );
  }
}

/** This process's lease expired while it did not renew, and another process holds the state file now. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(readonly holder: LeaseHolder) {
    super(
      `deploy-watchdog ${holder.command} (pid ${holder.pid} on ${holder.host}) took over this state file: this ` +
        `process had not renewed its lease for ${LEASE_TTL_MS / 1000} s (suspended or stalled). It stops, so that ` +
        'one process works on the file and no message is sent twice',
    );
  }
}

/** A lease held by this process: renew it while working, release it when done. */
export interface RunnerLease {
  /**
   * Throws {@link LeaseLostError} when another process holds it now, and a `StoreError` when it
   * cannot be written or the file is no longer at its path (deleted under the daemon).
   */
  renew(): void;
  release(): void;
}

/**
 * Opens a state with `open` and claims it for `command` before any migration (after the opening,
 * when there was none): a state an older daemon still works on is neither migrated nor taken under
 * it. Without `command`, only opens it. The store is closed again when the claim is refused.
 */
export function openClaimed(
  command: LeaseHolder['command'] | undefined,
  open: (claim: Pick<StoreOptions, 'beforeMigrating'>) => Store,
): { store: Store; lease: RunnerLease | undefined } {
  let lease: RunnerLease | undefined;
  const claim = (s: Store) => void (lease ??= command === undefined ? undefined : claimLease(s, command));
  const store = open(command === undefined ? {} : { beforeMigrating: claim });
  try {
    claim(store);
  } catch (err) {
    store.close();
    throw err;
  }
  return { store, lease };
}

/**
 * Claims the state file for `command`, or throws {@link LeaseHeldError} naming who holds it. `now`
 * is the wall clock, `monotonic` the clock of this host's processes ({@link monotonicNow}).
 */
export function claimLease(
  store: Store,
  command: LeaseHolder['command'],
  now: () => number = Date.now,
  monotonic: () => number = monotonicNow,
): RunnerLease {
  const mine: LeaseHolder = {
    id: randomBytes(8).toString('hex'),
    command,
    pid: process.pid,
    host: os.hostname(),
    started: Math.round(performance.timeOrigin),
    until: 0,
    ...(BOOT === undefined ? {} : { boot: BOOT }),
  };
  const held = (): LeaseHolder | undefined => {
    const value = store.getMeta(KEY);
    return value === undefined ? undefined : (JSON.parse(value) as LeaseHolder);
  };
  const hold = () =>
    store.setMeta(
      KEY,
      JSON.stringify({ ...mine, until: now() + LEASE_TTL_MS, monotonicUntil: monotonic() + LEASE_TTL_MS }),
    );
  const lasts = (other: LeaseHolder) =>
    BOOT !== undefined && other.boot === BOOT && other.monotonicUntil !== undefined
      ? other.monotonicUntil > monotonic()
      : other.until > now();
  store.transaction(() => {
    const other = held();
    if (other && other.id !== mine.id && lasts(other) && !gone(other)) throw new LeaseHeldError(other, command);
    hold();
  });
  return {
    // Never taken back from another: it expired while this process did not renew (suspended, stalled).
    renew: () => {
      store.transaction(() => {
        const other = held();
        if (other && other.id !== mine.id) throw new LeaseLostError(other);
        hold();
      });
      // Held in a file no longer at its path: a run started now makes a new file there, and works beside this one.
      const lost = store.lostFile();
      if (lost) throw lost;
    },
    // Only its own: a lease taken over meanwhile (this one had expired) is the other's to release.
    release: () => store.transaction(() => held()?.id === mine.id && store.setMeta(KEY, undefined)),
  };
}

/** Ms since this host booted, on a clock no one steps (`CLOCK_MONOTONIC`, shared by its processes). */
function monotonicNow(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

/**
 * The holder no longer runs: a process of this host whose pid is now this one's but that started
 * at another time (an earlier run of a restarted container), or no process at all.
 */
function gone(held: LeaseHolder): boolean {
  if (held.host !== os.hostname()) return false;
  if (held.pid === process.pid) return held.started !== Math.round(performance.timeOrigin);
  try {
    process.kill(held.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
