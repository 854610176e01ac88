import { quarantined, recordProblemOf } from '../api/quarantine.js';
import type { CollectorContext } from './collector-context.js';

/** What a `not_found` means for a record read by id. */
export type NotFoundMeans =
  /** The record is gone: the caller judges it so (an alert about it resolves). */
  | 'gone'
  /** The list named it a moment ago: a race or a fault, set aside like any record that cannot be read. */
  | 'unreadable';

/**
 * One record read by id (`read`), or undefined when it cannot be read: refused (`access_denied`,
 * as reads by id are graded by the record's environment, §5.4), not found, or not fitting its
 * schema. Such a record is set aside in `ctx.quarantine` (its alerts held, the admin told), unless
 * `notFound` is `gone` and it was not found. A failure that is not about the record (the token, the
 * function, the network, the deadline) fails the read whole, as does any failure without a
 * quarantine to set the record aside in.
 */
export async function readById<T>(
  ctx: Pick<CollectorContext, 'quarantine'>,
  fn: string,
  id: number,
  read: () => Promise<T>,
  notFound: NotFoundMeans,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    const problem = recordProblemOf(err);
    if (!problem) throw err;
    if (problem.reason === 'not_found' && notFound === 'gone') return undefined;
    if (!ctx.quarantine) throw err;
    ctx.quarantine.add(quarantined(fn, undefined, problem, id));
    return undefined;
  }
}
