/**
 * The delivery loop: claims due outbox rows per channel, groups them into messages, sends each
 * through its channel with a time limit, and marks the rows sent in a transaction afterwards.
 *
 * Guarantees, and how:
 * - Nothing lost: a row leaves `pending` only when its message was accepted, or after `max_age`
 *   (expired, logged and counted). A permanent error (a bad webhook) keeps the row and retries it at
 *   `max_backoff`, so a fixed config still delivers it.
 * - At most one repeat per crash: rows are marked right after the send; a crash in between leaves
 *   them pending and the next start sends that message again, once.
 * - Nothing twice across a database outage: each message's rows are claimed for this
 *   term (`claimed_by`, fenced) just before the send. A send accepted whose record the state then
 *   refuses is kept as a receipt ({@link SendReceipts}) and written once the state answers, and a
 *   new term leaves rows another term claimed alone for `claimGraceMs` (two leases, among replicas),
 *   recording them sent from a receipt instead. Past the grace, with no receipt (the old leader
 *   crashed, or is still cut off), such a row is sent again: once.
 * - Never blocks polling, and one slow channel never stalls another: each channel has its own
 *   async loop, every send has a time limit, and nothing here runs inside a cycle.
 * - Backoff per channel: a retryable failure pauses the channel (Retry-After when the receiver
 *   says, else exponential backoff with jitter), persisted so a restart honours it.
 * - A wall clock stepped back never silences a channel: a pause or a retry further ahead than the
 *   longest this loop sets (`#longestWaitMs`) is over at once, said at warn.
 */
import { randomBytes } from 'node:crypto';
import type { AlertEvent } from '../alerts/alert-event.js';
import { BackgroundLoop } from '../lib/background-loop.js';
import { backoffDelay, LOOP_BACKOFF } from '../lib/backoff.js';
import { errorCode, RepeatedLog } from '../lib/repeated-log.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { clockWentBack, warnClockWentBack, warnWaitsEndEarly, type Clock } from '../lib/clock.js';
import { clockTimeout } from '../lib/clock-timeout.js';
import { errorText } from '../lib/error-text.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { Metrics } from '../lib/metrics.js';
import { FencedError } from '../state/fenced-error.js';
import { MAX_RETRY_AFTER_MS, type Channel } from './channels/channel.js';
import { groupDue } from './grouping.js';
import type { NotifySettings } from './notify-settings.js';
import type { OutboxRow, OutboxStore } from './outbox-store.js';
import { SendReceipts } from './send-receipts.js';
import { sendWithTimeout } from './send-with-timeout.js';
import type { TimeToAlert } from './time-to-alert.js';

/** Said when a send is abandoned mid-way (its receiver may have it); tests count it. */
export const SEND_ABANDONED =
  'send abandoned before its answer: its receiver may have it, and the next term sends it again';

/** Rows one channel claims per round; more wait for the next round (or the next flush pass). */
const ROWS_PER_ROUND = 5_000;

/** What the delivery loop needs. */
export interface DeliveryOptions {
  rows: OutboxStore;
  channels: ReadonlyMap<string, Channel>;
  settings: Pick<NotifySettings, 'delivery' | 'max_items_per_message'>;
  clock: Clock;
  logger?: Logger;
  metrics?: Metrics;
  /** Jitter source; tests pass a constant. */
  random?: () => number;
  /** Runs at the start of every round before rows are claimed (release held rows, queue the digest). */
  housekeeping?: (now: number) => void;
  /** Adds to each event what is known of it when its message is built (its alert's context). */
  attach?: (event: AlertEvent) => AlertEvent;
  /** Told of each message delivered, in the transaction that marks its rows sent: the first deliveries of firing events. */
  timeToAlert?: TimeToAlert;
  /**
   * How long a term leaves rows another term claimed alone, for that term's receipt to arrive:
   * two of `state.leader.lease` among replicas; 0 (none) for a lone daemon, whose last term has ended.
   */
  claimGraceMs?: number;
}

/** What one round (or a flush) did, in messages and rows. */
export type DeliveryReport = ReturnType<typeof emptyReport>;

/** A report of a round that did nothing yet: each count at zero. */
const emptyReport = () => ({
  /** Messages accepted by their channel. */
  sent: 0,
  /** Outbox rows those messages delivered. */
  rowsSent: 0,
  /** Messages that failed and will be retried (channel paused). */
  retried: 0,
  /** Messages rejected permanently this round (kept, retried at max_backoff until max_age). */
  failed: 0,
  /** Rows given up at max_age this round. */
  expired: 0,
  /** Rows due to be sent after the round (pending), all channels. */
  waiting: 0,
  /** Rows held back after the round (silenced, muted, inhibited, a repeat or a context waiting), all channels. */
  held: 0,
});

/** What {@link Delivery.flush} answers. */
export interface FlushReport extends DeliveryReport {
  /** True when the deadline cut the flush short. */
  timedOut: boolean;
}

/** The outbox's delivery loop. */
export class Delivery {
  readonly #log: Logger;
  /** The rounds' failures: once a minute each with a count, so an outage of the store is not a stream. */
  readonly #quiet: RepeatedLog;
  readonly #random: () => number;
  /** Per channel, the round in progress: a second caller waits for it instead of sending twice. */
  readonly #busy = new Map<string, Promise<DeliveryReport>>();
  /** The housekeeping loop and one loop per channel, while started. */
  #loops: BackgroundLoop<unknown>[] | undefined;
  /** Accepted sends whose record the state refused. */
  readonly #receipts: SendReceipts;
  /** This term's name in `claimed_by`: new at each start, so rows of an earlier term wait their grace. */
  #claimant = newClaimant();
  /** Before this (clock ms), rows another term claimed are not sent. */
  #graceUntil: number;

  constructor(private readonly options: DeliveryOptions) {
    this.#log = (options.logger ?? silentLogger).child({ stage: 'delivery' });
    this.#quiet = new RepeatedLog(this.#log, { clock: options.clock });
    this.#random = options.random ?? Math.random;
    this.#receipts = new SendReceipts({ ...options, logger: this.#log, random: this.#random });
    this.#graceUntil = options.clock.now() + (options.claimGraceMs ?? 0);
  }

  /**
   * One round for every channel at `now`: housekeeping (held rows, digest), expiry, then each
   * channel's due messages, channels in parallel. Callable directly (tests, `check`).
   */
  async deliverDue(now: number = this.options.clock.now(), signal?: AbortSignal): Promise<DeliveryReport> {
    const report = this.#housekeeping(now);
    const rounds = await Promise.all(
      [...this.options.channels.keys()].map((name) => this.#channelRound(name, now, signal)),
    );
    for (const r of rounds) addInto(report, r);
    Object.assign(report, this.#updateWaiting());
    return report;
  }

  /** Starts the loops: one for housekeeping, one per channel, each every `delivery.interval`. */
  start(): void {
    if (this.#loops) return;
    const { clock } = this.options;
    this.#claimant = newClaimant();
    this.#graceUntil = clock.now() + (this.options.claimGraceMs ?? 0);
    const every = this.options.settings.delivery.interval;
    const loop = (what: string, pass: (signal: AbortSignal | undefined) => unknown): BackgroundLoop<unknown> =>
      new BackgroundLoop({
        clock,
        pass,
        sleepMs: () => every,
        // A storage fault must not end the loop: the next round tries again, after a backoff.
        onError: (err) => this.#roundFailed(err, what),
        backoff: { ...LOOP_BACKOFF, random: this.#random },
      });
    // Started (or reloaded) maybe because a channel's config was fixed: what failed is tried at once,
    // not at the end of its backoff (a rejected webhook's is max_backoff, 10 minutes by default).
    let retried = false;
    this.#loops = [
      loop('housekeeping', () => {
        if (!retried) this.options.rows.store.transaction(() => this.options.rows.retryFailedNow(clock.now()));
        retried = true;
        this.#housekeeping(clock.now());
        this.#updateWaiting();
      }),
      ...[...this.options.channels.keys()].map((name) =>
        loop(name, (signal) => this.#channelRound(name, clock.now(), signal)),
      ),
    ];
    for (const l of this.#loops) l.start();
  }

  /**
   * Something held may go now (a context was read): housekeeping at once, so what it releases is
   * due, then every channel's loop wakes to send it. Nothing when the loops are not running.
   */
  wake(): void {
    const loops = this.#loops;
    if (!loops) return;
    try {
      this.#housekeeping(this.options.clock.now());
    } catch (err) {
      this.#roundFailed(err, 'housekeeping');
    }
    for (const l of loops) l.wake();
  }

  /**
   * Whether this term may send a due row: not one whose send this process keeps a receipt of; one
   * another term claimed only once the grace for its receipt has passed.
   */
  #mayClaim(row: OutboxRow, now: number): boolean {
    if (this.#receipts.has(row.id)) return false;
    return row.claimedBy === null || row.claimedBy === this.#claimant || now >= this.#graceUntil;
  }

  /** Says why a round failed; one refused because this replica no longer leads is no fault (its loops are being stopped). */
  #roundFailed(err: unknown, loop: string): void {
    if (err instanceof FencedError)
      this.#log.debug({ loop, reason: err.reason }, 'delivery round ended: no longer the leader');
    else
      this.#quiet.error(
        { err: errorText(err, { named: true }), code: errorCode(err), loop },
        'delivery round failed',
        loop,
      );
  }

  /**
   * Stops the loops now: a send in flight is abandoned, its rows left due as they were, so a
   * reload never waits on a slow channel (a send may be allowed minutes, see `sendLimitMs`) and
   * polling resumes at once. As after a crash, an abandoned send that reached the receiver may be
   * sent once more by whoever delivers next.
   */
  async stop(): Promise<void> {
    await this.#halt(0);
  }

  /** Ends the loops; the rounds in progress may finish their sends for up to `deadlineMs`. */
  async #halt(deadlineMs: number): Promise<void> {
    const loops = this.#loops;
    if (!loops) return;
    this.#loops = undefined;
    await Promise.all(loops.map((l) => l.stop(deadlineMs)));
  }

  /**
   * For shutdown: stops the loops and sends what is due until `deadlineMs` has passed on the
   * clock; a send still waiting then is abandoned (its rows stay pending for the next start).
   */
  async flush(deadlineMs: number): Promise<FlushReport> {
    const { clock } = this.options;
    const deadline = clockTimeout(clock, deadlineMs, () => new Error('shutdown deadline reached'));
    const report: FlushReport = { ...emptyReport(), timedOut: false };
    try {
      // The rounds in progress may finish their sends, within the deadline.
      await this.#halt(deadlineMs);
      // Several passes only when a channel had more rows than one round takes.
      for (let pass = 0; pass < 10 && !deadline.signal.aborted; pass++) {
        const round = await this.deliverDue(clock.now(), deadline.signal);
        addInto(report, round);
        if (round.sent === 0) break;
      }
    } finally {
      deadline.dispose();
    }
    report.timedOut = deadline.signal.aborted;
    await this.#receipts.close();
    Object.assign(report, this.#updateWaiting());
    const { sent, waiting, held, timedOut } = report;
    this.#log.info({ sent, waiting, held, timedOut }, 'flushed the outbox');
    return report;
  }

  /** Releases held rows, runs the extra housekeeping and expires what is too old, in one transaction. */
  #housekeeping(now: number): DeliveryReport {
    const report = emptyReport();
    const { rows, settings, metrics } = this.options;
    rows.store.transaction(() => {
      this.options.housekeeping?.(now);
      const expired = rows.expirable(now, settings.delivery.max_age);
      for (const { id, channel, kind, fingerprint, attempts, lastError } of expired) {
        rows.expire(id, now);
        report.expired++;
        metrics?.notifications.inc({ channel, outcome: 'expired' });
        this.#log.error(
          { channel, outbox: id, kind, fingerprint, attempts, lastError },
          'notification not delivered within max_age; given up',
        );
      }
    });
    return report;
  }

  /** One channel's round, never two at once for the same channel. */
  #channelRound(name: string, now: number, signal?: AbortSignal): Promise<DeliveryReport> {
    // The round running, or a new one that leaves the map when it ends (always after it is added: it awaits).
    return getOrAdd(this.#busy, name, () =>
      this.#deliverChannel(name, now, signal).finally(() => this.#busy.delete(name)),
    );
  }

  async #deliverChannel(name: string, now: number, signal?: AbortSignal): Promise<DeliveryReport> {
    const report = emptyReport();
    const { rows, clock, settings, metrics } = this.options;
    const channel = this.options.channels.get(name);
    if (!channel) return report;
    const state = rows.channelState(name);
    const longest = this.#longestWaitMs();
    if (state.pausedUntil !== null && state.pausedUntil > now) {
      if (!clockWentBack(state.pausedUntil, now, longest)) return report;
      // Retried now, not at now + the longest wait: a receiver still unwell says so again, and the
      // pause it asks for then is a true one; kept, the pause would cost the step too.
      warnClockWentBack(this.#log, `channel ${name}'s pause ended early`, state.pausedUntil, now);
      rows.resumeChannel(name);
      state.pausedUntil = null;
    }
    // Claimed in a transaction: among replicas a fenced one (`state/leader-election.ts`), so a
    // deposed leader sends nothing it claims after its lease has passed on.
    // What another term accepted and could not record is recorded first, in the same transaction.
    const due = rows.store
      .transaction(() => {
        rows.applyReceipts();
        return rows.due(name, now, ROWS_PER_ROUND, longest);
      })
      .filter((r) => this.#mayClaim(r, now));
    const early = due.flatMap((r) => (r.nextAttemptAt !== null && r.nextAttemptAt > now ? [r.nextAttemptAt] : []));
    warnWaitsEndEarly(this.#log, `notifications of channel ${name} are retried early`, early, now);
    const messages = groupDue(due, settings.max_items_per_message, this.options.attach);
    const log = this.#log.child({ channel: name });
    for (const message of messages) {
      if (signal?.aborted) break;
      rows.store.transaction(() => rows.claim(message.rows, this.#claimant));
      const result = await sendWithTimeout(channel, message.notification, {
        clock,
        timeoutMs: settings.delivery.timeout,
        signal,
      });
      // Stopped mid-send (shutdown deadline, a step-down): the answer is unknown and not the
      // receiver's fault, so the rows stay due as they were; the next term sends them (at most once
      // more). Said, since the receiver may have it: the one duplicate an outage can still make.
      if (result.outcome !== 'ok' && signal?.aborted) {
        log.info({ rows: message.rows.length }, SEND_ABANDONED);
        break;
      }
      const at = clock.now();
      if (result.outcome === 'ok') {
        if (result.refused !== undefined) {
          // Delivered, but not to everyone: those recipients are a failure a person must see.
          metrics?.notifications.inc({ channel: name, outcome: 'partial' });
          log.error({ reason: result.refused }, 'delivered, but not to every recipient');
        }
        let told: ReturnType<TimeToAlert['record']>;
        try {
          told = rows.store.transaction(() => {
            rows.markSent(message.rows, at);
            if (state.consecutiveFailures > 0 || state.pausedUntil !== null) {
              state.consecutiveFailures = 0;
              state.pausedUntil = null;
              rows.setChannelState(name, state, null);
            }
            return this.options.timeToAlert?.record(message.rows, name, at) ?? [];
          });
        } catch (err) {
          // Accepted, and not recorded: kept, so that neither this process nor the next leader sends it again.
          this.#receipts.keep(message.rows, this.#claimant, at, err);
          throw err;
        }
        this.options.timeToAlert?.observe(told);
        report.sent++;
        report.rowsSent += message.rows.length;
        metrics?.notifications.inc({ channel: name, outcome: 'sent' });
        log.debug({ rows: message.rows.length, kind: message.notification.type }, 'notification sent');
        continue;
      }
      if (result.outcome === 'unconfirmed' || result.outcome === 'retryable') {
        // The channel is paused (Retry-After when the receiver says, else its backoff): the rest of
        // this round waits with it. An unconfirmed send may have reached the receiver: one more
        // send at most, after the pause, and a row sent so twice is given up as sent rather than
        // sent a third time.
        state.consecutiveFailures++;
        const asked = result.outcome === 'retryable' ? result.retryAfterMs : undefined;
        // Capped here too, whatever the channel: no pause may outlast the longest wait.
        const wait = Math.min(asked ?? this.#backoff(state.consecutiveFailures), MAX_RETRY_AFTER_MS);
        state.pausedUntil = at + wait;
        const givenUp = rows.store.transaction(() => {
          rows.setChannelState(name, state, result.reason);
          if (result.outcome === 'unconfirmed') return rows.markUnconfirmed(message.rows, at + wait, result.reason, at);
          rows.markFailed(message.rows, at + wait, result.reason, at);
          return undefined;
        });
        report.retried++;
        metrics?.notifications.inc({ channel: name, outcome: givenUp ? 'unconfirmed' : 'retry' });
        if (givenUp) {
          log.error(
            { reason: result.reason, rows: message.rows.length, givenUp: givenUp.length, retryInMs: wait },
            givenUp.length > 0
              ? 'delivery unconfirmed again; recorded as sent, never sent a third time (look whether it arrived)'
              : 'delivery unconfirmed; sent once more after the pause, at most',
          );
        } else {
          const { consecutiveFailures: failures } = state;
          log.warn(
            { reason: result.reason, retryInMs: wait, retryAfter: asked !== undefined, failures },
            'delivery failed; channel paused before the next try',
          );
        }
        break;
      }
      const retryAt = at + settings.delivery.max_backoff;
      rows.store.transaction(() => {
        rows.markFailed(message.rows, retryAt, result.reason, at);
        // Refused for what the channel is (a wrong password): the next message would be too, and
        // trying each could lock the account. The rest wait, and are tried with this one.
        // Counted in its failure streak too: the heartbeat holds while no channel delivers.
        if (result.wholeChannel) {
          state.consecutiveFailures++;
          rows.setChannelState(name, { ...state, pausedUntil: retryAt }, result.reason);
        }
      });
      report.failed++;
      metrics?.notifications.inc({ channel: name, outcome: 'failed' });
      log.error(
        { reason: result.reason, rows: message.rows.length, retryInMs: settings.delivery.max_backoff },
        'delivery rejected permanently; kept and retried slowly until max_age (fix the channel config)',
      );
      if (result.wholeChannel) break;
    }
    return report;
  }

  /**
   * The longest this loop puts a channel or a row off: the backoff's cap (a permanent refusal's
   * retry too) or the longest Retry-After a channel accepts. A wait further ahead is a clock step.
   */
  #longestWaitMs(): number {
    return Math.max(this.options.settings.delivery.max_backoff, MAX_RETRY_AFTER_MS);
  }

  /** The channel's pause after its `failures`-th failure in a row: exponential, capped, with jitter. */
  #backoff(failures: number): number {
    const { delivery } = this.options.settings;
    return backoffDelay(failures, {
      baseMs: delivery.initial_backoff,
      capMs: delivery.max_backoff,
      jitter: 0.2,
      random: this.#random,
    });
  }

  /**
   * Sets each channel's waiting and held gauges, and answers the totals. Held rows are apart: a
   * silence or a mute window holds rows for hours on purpose, which a backlog alert on the
   * waiting gauge must not take for a channel that cannot deliver.
   */
  #updateWaiting(): Pick<DeliveryReport, 'waiting' | 'held'> {
    const backlog = this.options.rows.backlog();
    const totals = { waiting: 0, held: 0 };
    for (const name of this.options.channels.keys()) {
      const { pending = 0, held = 0 } = backlog.get(name) ?? {};
      this.options.metrics?.outboxWaiting.set({ channel: name }, pending);
      this.options.metrics?.outboxHeld.set({ channel: name }, held);
      totals.waiting += pending;
      totals.held += held;
    }
    return totals;
  }
}

/** Adds a round's counts to a report's (`waiting` and `held` are levels, not counts: the caller sets them). */
function addInto(into: DeliveryReport, r: DeliveryReport): void {
  for (const key of ['sent', 'rowsSent', 'retried', 'failed', 'expired'] as const) into[key] += r[key];
}

/** A term's name in `claimed_by`: random, so no two terms of any replica share one. */
function newClaimant(): string {
  return randomBytes(8).toString('hex');
}
