/**
 * What a replica knows and could not record: messages its channels accepted whose "sent" the state
 * refused (PostgreSQL gone between the receiver's answer and the record, or this replica deposed
 * meanwhile). Issue 24: the next leader sent them again. They are kept here, in memory, and
 * written to `outbox_receipts` as soon as this process's own connection to the state answers,
 * whatever its role then (a follower writes as the console does; only the leader reads them, in
 * the fenced transaction that claims rows: `OutboxStore.applyReceipts`). The next leader leaves
 * rows another term claimed alone for a grace (two leases) meanwhile (`delivery.ts`).
 *
 * Its loop runs only while something is kept, and outlives the delivery loops: a deposed leader's
 * delivery stops at once, its receipts must not. Each try first asks the store's connection
 * whether the server answers (briefly, even during the store's fail-fast spell after a failure),
 * so a server that stopped or hangs costs the main thread a short wait per try, not a statement's.
 */
import { Backoff } from '../lib/backoff.js';
import type { Clock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { errorCode, RepeatedLog } from '../lib/repeated-log.js';
import type { OutboxRow, OutboxStore, SendReceipt } from './outbox-store.js';

/**
 * How long a try waits for the server to answer its ping: from half a second, doubling with the
 * failures to two (a connection made anew, its worker thread started, may take a second on a
 * loaded machine, and a ping cut short throws that worker away). Then for the write.
 */
const PING_MS = { baseMs: 500, capMs: 2_000 };
const WRITE_MS = 2_000;
/** Between tries: from this, doubling to a second (well within the next leader's grace of two leases). */
const RETRY = { baseMs: 250, capMs: 1_000 };

/** Options of {@link SendReceipts}. */
export interface SendReceiptsOptions {
  rows: OutboxStore;
  clock: Clock;
  logger: Logger;
  random?: () => number;
}

/** The accepted sends of this process not yet recorded (see the file's comment). */
export class SendReceipts {
  readonly #o: SendReceiptsOptions;
  readonly #quiet: RepeatedLog;
  /** By outbox row id. */
  readonly #kept = new Map<number, SendReceipt>();
  #loop: Promise<void> | undefined;
  #sleep: AbortController | undefined;
  #closed = false;

  constructor(options: SendReceiptsOptions) {
    this.#o = options;
    this.#quiet = new RepeatedLog(options.logger, { clock: options.clock });
  }

  /** Whether a send of the row is kept here: it was accepted, and must not be sent again. */
  has(outboxId: number): boolean {
    return this.#kept.has(outboxId);
  }

  /** Keeps the rows of a message accepted at `sentAt` under the claim `claimedBy`, and starts writing them. */
  keep(rows: readonly OutboxRow[], claimedBy: string, sentAt: number, why: unknown): void {
    for (const r of rows) this.#kept.set(r.id, { outboxId: r.id, claimedBy, sentAt });
    this.#o.logger.warn(
      { channel: rows[0]?.channel, rows: rows.length, err: errorText(why) },
      'message accepted, but the state did not take its record; kept, and recorded once the state answers',
    );
    if (!this.#closed) this.#loop ??= this.#run().finally(() => (this.#loop = undefined));
  }

  /** One try now, its ping waiting up to `pingMs`; throws when the state does not take them. */
  tryNow(pingMs: number = PING_MS.capMs): void {
    if (this.#kept.size === 0) return;
    const { store } = this.#o.rows;
    if (!store.ping(pingMs)) throw new Error('the state does not answer');
    const receipts = [...this.#kept.values()];
    store.within(WRITE_MS, () => store.transaction(() => this.#o.rows.keepReceipts(receipts)));
    for (const r of receipts) this.#kept.delete(r.outboxId);
    this.#o.logger.info({ rows: receipts.length }, 'recorded the accepted sends the state could not take before');
  }

  /**
   * No more tries after one last one (the process stops): what is still kept is said and dropped;
   * the next leader sends those messages again once its grace has passed.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#sleep?.abort();
    await this.#loop;
    try {
      this.tryNow();
    } catch (err) {
      this.#o.logger.error(
        { rows: this.#kept.size, err: errorText(err) },
        'accepted sends left unrecorded at stop: the next leader sends them again',
      );
    }
    this.#kept.clear();
  }

  async #run(): Promise<void> {
    const backoff = new Backoff({ ...RETRY, random: this.#o.random });
    while (this.#kept.size > 0 && !this.#closed) {
      let wait = RETRY.baseMs;
      try {
        this.tryNow(Math.min(PING_MS.capMs, PING_MS.baseMs * 2 ** backoff.failures));
      } catch (err) {
        this.#quiet.warn(
          { err: errorText(err), code: errorCode(err), rows: this.#kept.size },
          'cannot record accepted sends yet',
        );
        wait = backoff.failed();
      }
      if (this.#kept.size === 0 || this.#closed) break;
      this.#sleep = new AbortController();
      await this.#o.clock.sleep(wait, this.#sleep.signal).catch(() => undefined);
    }
  }
}
