/**
 * A cycle's state transaction that the leader's step-down cut. On PostgreSQL the main thread waits
 * through the whole transaction (`src/state/postgres-database.ts`), and a storm's takes seconds
 * (`npm run bench:state-storm`); the lease is renewed meanwhile, aside, between its statements
 * (`LeaderElection.keepUp`). What can still cut it: the lease found another's, or one wait longer
 * than what is left of the lease (a statement stuck on a lock or a slow server). Then nothing of the
 * cycle is written or told, and the next leader reads it again: said, so that the step-down's own
 * line is read as the loss of a cycle. A transaction refused at its start (the deadline had passed
 * before it) lost nothing worth the words, and is left to the step-down's line.
 */
import type { StateConfig } from '../config/load-config.js';

/**
 * The warning for a transaction on `state` cut by the step-down after `ms`, or undefined when it
 * was refused at its start (under a quarter of the lease) or there is no leader (SQLite).
 */
export function cutCommitWarning(ms: number, state: StateConfig): string | undefined {
  if (state.url === undefined || ms < state.leader.lease / 4) return undefined;
  return (
    `the cycle's state transaction was cut after ${Math.round(ms)} ms when the leader stepped down ` +
    `(the line before says why): nothing of this cycle was written or told, and the next leader reads it again. ` +
    `If one statement waited that long (a lock, a slow server), a longer state.leader.lease gives it more room`
  );
}
