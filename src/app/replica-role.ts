/**
 * What makes a `run` process a replica among others on a PostgreSQL state (docs/high-availability.md):
 * the seam between its store and its leader election, and the election itself. The store is
 * opened before the election exists (the election's lease needs the store's URL), so the seam
 * holds the election once it is bound:
 * - every outermost transaction is fenced by it (`StoreOptions.writeGuard`);
 * - every wait of the main thread for the store's PostgreSQL lasts at most until the leader's
 *   deadline (`StoreOptions.waitLimit`): a statement that hangs, a server that stopped answering,
 *   cannot keep a leader acting past it. The wait is cut, the worker and its connection thrown
 *   away (the server rolls the transaction back), and the leader steps down then and there;
 * - and before each wait inside a transaction, a lease renewal that is late is made aside
 *   (`LeaderElection.keepUp`), and the front door's heartbeat beats, so a long transaction that
 *   makes progress keeps the lease and passes `/healthz`.
 */
import type { StateConfig } from '../config/load-config.js';
import type { Secret } from '../lib/secret.js';
import type { Metrics } from '../lib/metrics.js';
import { LeaderElection, type LeaderElectionOptions } from '../state/leader-election.js';
import { LeaderLease } from '../state/leader-lease.js';
import { postgresTarget } from '../state/open-state.js';
import type { Store, StoreOptions } from '../state/store.js';

/** The seam of {@link replicaSeam}: the store's options, and where the election is bound once made. */
export interface ReplicaSeam {
  options: Pick<StoreOptions, 'writeGuard' | 'waitLimit'>;
  /**
   * `progress`: told before each wait inside a transaction, which makes progress though the event
   * loop does not turn (the front door's heartbeat: `HealthListener.beat`).
   */
  bind(election: LeaderElection, progress?: () => void): void;
}

/** The store options of a replica, bound to its election later (see the file's comment). */
export function replicaSeam(): ReplicaSeam {
  let bound: LeaderElection | undefined;
  let progressed: (() => void) | undefined;
  return {
    options: {
      writeGuard: (db) => bound?.fence(db),
      waitLimit: {
        leftMs: () => bound?.waitLeftMs(),
        // Only ever asked after leftMs gave a limit, so the election is bound.
        exceeded: () => bound!.waitExceeded(),
        // Progress told after the renewal, so what it publishes (the fence) is the renewed one.
        keepUp: (aside) => {
          try {
            bound?.keepUp(aside);
          } finally {
            progressed?.();
          }
        },
      },
    },
    bind: (election, progress) => {
      bound = election;
      progressed = progress;
    },
  };
}

/** What {@link replicaElection} needs. */
export interface ReplicaElectionOptions extends Pick<
  LeaderElectionOptions,
  'logger' | 'onElected' | 'onDeposed' | 'onFollowing'
> {
  store: Store;
  state: StateConfig & { url: Secret };
  metrics: Metrics;
}

/**
 * The leader election of a replica: its lease on a connection of its own, each attempt ending
 * before the next is due; a free lease taken only when the store's own connection answers (a
 * `SELECT 1` waiting at most `state.connect_timeout`), so a replica whose work would fail at once
 * leaves the lease to one whose would not. It is asked only when the lease is free and its own
 * connection answered, so the server is up; a store that cannot even connect fails at once.
 */
export function replicaElection({ store, state, metrics, ...callbacks }: ReplicaElectionOptions): LeaderElection {
  const leaseMs = state.leader.lease;
  const attemptMs = Math.floor(leaseMs / 4);
  return new LeaderElection({
    lease: new LeaderLease({ target: postgresTarget(state), where: store.path, leaseMs, timeoutMs: attemptMs }),
    leaseMs,
    statementTimeoutMs: state.statement_timeout,
    ...callbacks,
    onRole: (leading) => metrics.leader.set(leading ? 1 : 0),
    // As long as connecting may take: a new connection (a worker thread started, TLS) is no failure.
    canLead: () => store.ping(state.connect_timeout),
  });
}
