/**
 * The leader's write fence as data, so a store on another thread than the election's (the
 * console's, `src/console/console-worker.ts`) fences its writes exactly as the election fences
 * the main thread's (`LeaderElection.fence`): open while following, refused while stepping down,
 * and while leading the same prelude and `FENCE_SQL` in every outermost transaction, so a write
 * lands only while this holder's lease of this epoch lasts on the server's own clock.
 */
import { FencedError } from './fenced-error.js';
import { FENCE_SQL, fencePrelude, type FenceTimeouts } from './leader-lease.js';
import type { SqlDatabase, SqlStatement } from './sql-database.js';

/** What the write guard does now, as the election publishes it (`LeaderElection.status.fence`). */
export type WriteFence =
  | { mode: 'open' }
  | { mode: 'refuse'; reason: string }
  | {
      mode: 'fence';
      holder: string;
      epoch: number;
      /** Date.now() of the leader's local deadline: past it the election steps down. */
      deadlineAt: number;
      timeouts: FenceTimeouts;
    };

/**
 * A store's write guard (`StoreOptions.writeGuard`) following the fence `current()` says: throws
 * {@link FencedError} for a write the replica may not make now. The election itself steps down
 * when the deadline passes or the database refuses; this guard only refuses the write.
 */
export function writeFence(current: () => WriteFence): (db: SqlDatabase) => void {
  let cached: { db: SqlDatabase; statement: SqlStatement<[string, number], { epoch: string }> } | undefined;
  return (db) => {
    const fence = current();
    if (fence.mode === 'open') return;
    if (fence.mode === 'refuse') throw new FencedError(fence.reason);
    if (Date.now() >= fence.deadlineAt) throw new FencedError('the lease could not be renewed in time');
    if (cached?.db !== db) cached = { db, statement: db.prepare(FENCE_SQL) };
    db.exec(fencePrelude(fence.timeouts));
    if (!cached.statement.get(fence.holder, fence.epoch)) {
      throw new FencedError(
        `the database refused a write: the lease of epoch ${fence.epoch} is no longer this replica's`,
      );
    }
  };
}
