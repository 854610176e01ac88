/**
 * A write of the leader's work refused because this process no longer holds the leader lease of
 * the epoch it was elected with (`leader-election.ts`): another replica may lead now. Nothing of
 * the transaction was written. Not a storage fault: the loops that meet it stop and the process
 * goes back to following, where an error would have alerted on a database that is fine.
 */
export class FencedError extends Error {
  override readonly name = 'FencedError';

  constructor(
    /** Why the write was refused, in words for the log ("the lease of epoch 4 is no longer this replica's"). */
    readonly reason: string,
  ) {
    super(`not written: this replica no longer leads (${reason})`);
  }
}
