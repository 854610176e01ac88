/**
 * A cycle's state transaction that comes near what a leader may wait. On PostgreSQL the main
 * thread waits through the whole transaction (`src/state/postgres-database.ts`), so the lease
 * cannot be renewed meanwhile, and a leader that could not renew it for ¾ of `state.leader.lease`
 * steps down with the cycle undone: the next leader meets the same storm. A storm of 10,000 new
 * alerts on two channels takes 8–9 s quiet on loopback (`npm run bench:state-storm`), past the
 * default 7.5 s. Said from half of it on, with the setting that gives it room.
 */
import type { StateConfig } from '../config/load-config.js';

/** The warning for a transaction of `ms` on `state`, or undefined when there is room (or no leader: SQLite). */
export function longCommitWarning(ms: number, state: StateConfig): string | undefined {
  if (state.url === undefined) return undefined;
  const leaderWaitMs = (state.leader.lease * 3) / 4;
  if (ms < leaderWaitMs / 2) return undefined;
  return (
    `the cycle's state transaction took ${Math.round(ms)} ms; a leader may wait ${Math.round(leaderWaitMs)} ms ` +
    `(¾ of state.leader.lease) before it steps down with the cycle undone, and the next leader meets the same ` +
    `cycle: raise state.leader.lease (to at least ${Math.ceil((ms * 8) / 3 / 1000)}s for this one)`
  );
}
