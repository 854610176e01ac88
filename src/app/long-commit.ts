/**
 * A cycle's state transaction that comes near what a leader may wait. On PostgreSQL the main
 * thread waits through the whole transaction (`src/state/postgres-database.ts`), so the lease
 * cannot be renewed meanwhile, and a leader that could not renew it for ¾ of `state.leader.lease`
 * steps down with the cycle undone: the next leader meets the same storm, and the one after it. A
 * transaction may begin up to a quarter of the lease after the last renewal, so it has half the
 * lease at worst. A storm of 10,000 new alerts on two channels takes 8–9 s on loopback (`npm run
 * bench:state-storm`), past the 5 s the default lease gives. Said from half of that room on, with a
 * lease that gives the transaction twice the room it needs; a transaction the step-down cut before
 * it had that long (the fence refused it at its start, the time spent before it) is not what to
 * blame, and is left to the step-down's own line.
 */
import type { StateConfig } from '../config/load-config.js';

/**
 * The warning for a transaction of `ms` on `state`, or undefined when there is room (or no leader:
 * SQLite). `cut`: it ended because the leader stepped down, so it would have taken longer.
 */
export function longCommitWarning(ms: number, state: StateConfig, cut = false): string | undefined {
  if (state.url === undefined) return undefined;
  const room = state.leader.lease / 2;
  if (ms < room / 2) return undefined;
  const lease = Math.ceil((4 * ms) / 1000);
  return cut
    ? `the cycle's state transaction was cut after ${Math.round(ms)} ms: the leader could not renew its lease ` +
        `meanwhile and stepped down with the cycle undone, and the next leader meets the same cycle. ` +
        `Raise state.leader.lease to more than ${lease}s (4 times what the transaction had; it needs more)`
    : `the cycle's state transaction took ${Math.round(ms)} ms; the leader cannot renew its lease meanwhile, ` +
        `and from ${Math.round(room)} ms (half of state.leader.lease) it may step down with the cycle undone: ` +
        `raise state.leader.lease to at least ${lease}s (4 times this transaction)`;
}
