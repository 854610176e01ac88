/**
 * One `pg` connection, made when there is none and again after it was lost: the worker thread's
 * two (`postgres-worker.ts`) and the leader lease's own (`leader-lease.ts`).
 */
import type pg from 'pg';

/** A connection made by `make` on first use, forgotten when it dies, made again on the next. */
export class ReconnectingClient {
  live: pg.Client | undefined;

  constructor(private readonly make: () => pg.Client | Promise<pg.Client>) {}

  async client(): Promise<pg.Client> {
    if (this.live) return this.live;
    const c = await this.make();
    // A connection that dies between statements says so here; the next statement connects again.
    const forget = () => {
      if (this.live === c) this.live = undefined;
    };
    c.on('error', forget);
    c.on('end', forget);
    try {
      await c.connect();
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    return (this.live = c);
  }

  /** Ends the connection, if there is one; the next statement connects again. */
  async drop(): Promise<void> {
    const c = this.live;
    this.live = undefined;
    await c?.end().catch(() => undefined);
  }
}
