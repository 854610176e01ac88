/**
 * The notification tables' SQL (migration 003), prepared once per open {@link Store}: the outbox,
 * the per-(fingerprint, channel) notification log, channel pauses and the digest log. Row ⇄ object
 * mapping lives here and nowhere else; the decisions live in `outbox.ts` and `delivery.ts`.
 */
import type { AlertEvent, AlertEventKind } from '../alerts/alert-event.js';
import type { Store } from '../state/store.js';
import type { SqlDatabase, SqlStatement } from '../state/sql-database.js';
import type { NotificationLogEntry, NotifyDecision } from './delivery-decision.js';

/** Where an outbox row is. */
export type OutboxStatus = 'pending' | 'held' | 'sent' | 'suppressed' | 'expired';

/** One outbox row as the code sees it (times in ms since the epoch). */
export interface OutboxRow {
  id: number;
  channel: string;
  route: string;
  source: 'event' | 'notice';
  eventId: number | null;
  fingerprint: string | null;
  /** The event kind, or the notice topic. */
  kind: string;
  /**
   * The AlertEvent or NoticeNotification as JSON: its body (`outbox_bodies`, one per event, shared
   * by the event's rows on every channel), or the row's own payload if written before migration
   * 017. Empty where the read did not need it (the console's).
   */
  payload: string;
  /** JSON of the group labels; rows with the same channel and key share a message. */
  groupKey: string;
  status: OutboxStatus;
  decision: NotifyDecision;
  detail: string | null;
  /** Fingerprint of the cause of an inhibited row. */
  heldBy: string | null;
  attempts: number;
  /** Sends whose receipt was never confirmed (see migration 015); at the second, the row is given up as sent. */
  unconfirmed: number;
  createdAt: number;
  /** When the row became pending; `max_age` counts from here. */
  dueSince: number | null;
  nextAttemptAt: number | null;
  sentAt: number | null;
  lastError: string | null;
  /** The term of delivery whose send of the row may be under way or may have happened unrecorded (migration 020). */
  claimedBy: string | null;
}

/** A send the receiver accepted whose record could not be written (migration 020). */
export interface SendReceipt {
  outboxId: number;
  /** The term that sent it: the row's `claimed_by` then. */
  claimedBy: string;
  sentAt: number;
}

/** A new row, before it has an id: its body stored first ({@link OutboxStore.insertBody}) and named. */
export type NewOutboxRow = Omit<
  OutboxRow,
  'id' | 'attempts' | 'unconfirmed' | 'sentAt' | 'lastError' | 'payload' | 'claimedBy'
> & {
  bodyId: number;
};

/** A channel's delivery state: a pause asked for by the receiver, and its failure streak. */
export interface ChannelState {
  pausedUntil: number | null;
  consecutiveFailures: number;
}

/**
 * The rows the delivery reads, each with its body's text (`body_text`) beside its own payload
 * (empty since migration 017): one body, stored once, for the rows of every channel.
 */
const WITH_BODY =
  'SELECT o.*, b.body AS body_text FROM outbox AS o LEFT JOIN outbox_bodies AS b ON b.body_id = o.body_id';

interface DbRow {
  id: number;
  channel: string;
  route: string;
  source: string;
  event_id: number | null;
  fingerprint: string | null;
  kind: string;
  payload: string;
  /** The body's text, where the read joined it. */
  body_text?: string | null;
  group_key: string;
  status: string;
  decision: string;
  detail: string | null;
  held_by: string | null;
  attempts: number;
  unconfirmed: number;
  created_at: number;
  due_since: number | null;
  next_attempt_at: number | null;
  sent_at: number | null;
  last_error: string | null;
  claimed_by: string | null;
}

/** The prepared statements of the notification tables for one open store. */
export class OutboxStore {
  readonly db: SqlDatabase;
  readonly #insert: SqlStatement<[NewOutboxRow], { id: number }>;
  readonly #insertBody: SqlStatement<[string, number], { body_id: number }>;
  readonly #held: SqlStatement<[], DbRow>;
  readonly #heldFor: SqlStatement<[string, string], DbRow>;
  readonly #heldBy: SqlStatement<[string, string], DbRow>;
  readonly #due: SqlStatement<[string, number, number], DbRow>;
  readonly #redecide: SqlStatement;
  readonly #markSent: SqlStatement<[{ now: number; id: number }]>;
  readonly #markFailed: SqlStatement<[{ id: number; next: number; error: string; now: number }]>;
  readonly #markUnconfirmed: SqlStatement<[{ id: number; next: number; error: string; now: number }]>;
  readonly #giveUpUnconfirmed: SqlStatement<[{ id: number; error: string; now: number }]>;
  readonly #expirable: SqlStatement<[number], DbRow>;
  readonly #expire: SqlStatement<[number, number]>;
  readonly #waiting: SqlStatement<[], { channel: string; n: number }>;
  readonly #logGet: SqlStatement<[string, string], { last_kind: string; announced_at: number }>;
  readonly #logPut: SqlStatement<[string, string, string, number]>;
  readonly #logClose: SqlStatement<[string, string]>;
  readonly #logCloseAll: SqlStatement<[string]>;
  readonly #logSent: SqlStatement<[number, string, string]>;
  readonly #channelGet: SqlStatement<[string], { paused_until: number | null; consecutive_failures: number }>;
  readonly #channelPut: SqlStatement<[string, number | null, number, string | null]>;
  readonly #digestInsert: SqlStatement<[string, string, number]>;
  readonly #unrouted: SqlStatement<[], { event_id: number; payload: string | null }>;
  readonly #forgetUnrouted: SqlStatement<[number]>;
  readonly #told: SqlStatement<[string], { channel: string }>;
  readonly #lastNews: SqlStatement<[string], { id: number | null }>;
  readonly #claim: SqlStatement<[string, number]>;
  readonly #insertReceipt: SqlStatement<[number, string, number]>;
  readonly #receipts: SqlStatement<[], { outbox_id: number; claimed_by: string; sent_at: number }>;
  readonly #applyReceipt: SqlStatement<
    [{ id: number; by: string; at: number }],
    { fingerprint: string | null; channel: string }
  >;
  readonly #forgetReceipt: SqlStatement<[number, string]>;

  constructor(readonly store: Store) {
    const db = (this.db = store.db);
    this.#insert = db.prepare(
      `INSERT INTO outbox (channel, route, source, event_id, fingerprint, kind, payload, body_id, group_key, status,
         decision, detail, held_by, created_at, due_since, next_attempt_at, updated_at)
       VALUES (@channel, @route, @source, @eventId, @fingerprint, @kind, '', @bodyId, @groupKey, @status,
         @decision, @detail, @heldBy, @createdAt, @dueSince, @nextAttemptAt, @createdAt)
       RETURNING id`,
    );
    this.#insertBody = db.prepare('INSERT INTO outbox_bodies (body, stored_at) VALUES (?, ?) RETURNING body_id');
    this.#held = db.prepare(`${WITH_BODY} WHERE o.status = 'held' ORDER BY o.id`);
    this.#heldFor = db.prepare(
      `${WITH_BODY} WHERE o.status = 'held' AND o.fingerprint = ? AND o.channel = ? ORDER BY o.id`,
    );
    this.#heldBy = db.prepare(`${WITH_BODY} WHERE o.status = 'held' AND o.held_by = ? AND o.channel = ? ORDER BY o.id`);
    this.#due = db.prepare(
      `${WITH_BODY} WHERE o.status = 'pending' AND o.channel = ? AND o.next_attempt_at <= ? ORDER BY o.id LIMIT ?`,
    );
    this.#redecide = db.prepare(
      `UPDATE outbox SET status = @status, decision = @decision, detail = @detail, held_by = @heldBy,
         due_since = @dueSince, next_attempt_at = @nextAttemptAt, updated_at = @now WHERE id = @id`,
    );
    this.#markSent = db.prepare(
      `UPDATE outbox SET status = 'sent', sent_at = @now, attempts = attempts + 1, claimed_by = NULL, updated_at = @now
       WHERE id = @id AND status = 'pending'`,
    );
    this.#markFailed = db.prepare(
      `UPDATE outbox SET attempts = attempts + 1, next_attempt_at = @next, last_error = @error, claimed_by = NULL,
         updated_at = @now
       WHERE id = @id AND status = 'pending'`,
    );
    this.#markUnconfirmed = db.prepare(
      `UPDATE outbox SET attempts = attempts + 1, unconfirmed = unconfirmed + 1, next_attempt_at = @next,
         last_error = @error, claimed_by = NULL, updated_at = @now
       WHERE id = @id AND status = 'pending'`,
    );
    this.#giveUpUnconfirmed = db.prepare(
      `UPDATE outbox SET status = 'sent', sent_at = @now, attempts = attempts + 1, unconfirmed = unconfirmed + 1,
         last_error = @error, claimed_by = NULL, updated_at = @now
       WHERE id = @id AND status = 'pending'`,
    );
    this.#expirable = db.prepare(`${WITH_BODY} WHERE o.status = 'pending' AND o.due_since <= ? ORDER BY o.id`);
    this.#expire = db.prepare(
      `UPDATE outbox SET status = 'expired', updated_at = ? WHERE id = ? AND status = 'pending'`,
    );
    this.#waiting = db.prepare(
      `SELECT channel, COUNT(*) AS n FROM outbox WHERE status IN ('pending', 'held') GROUP BY channel`,
    );
    this.#logGet = db.prepare(
      'SELECT last_kind, announced_at FROM notification_log WHERE fingerprint = ? AND channel = ?',
    );
    this.#logPut = db.prepare(
      `INSERT INTO notification_log (fingerprint, channel, last_kind, announced_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (fingerprint, channel) DO UPDATE SET last_kind = excluded.last_kind, announced_at = excluded.announced_at`,
    );
    this.#logClose = db.prepare(
      `UPDATE notification_log SET last_kind = 'resolved' WHERE fingerprint = ? AND channel = ?`,
    );
    this.#logCloseAll = db.prepare(`UPDATE notification_log SET last_kind = 'resolved' WHERE fingerprint = ?`);
    this.#logSent = db.prepare('UPDATE notification_log SET last_sent_at = ? WHERE fingerprint = ? AND channel = ?');
    this.#channelGet = db.prepare(
      'SELECT paused_until, consecutive_failures FROM notify_channel_state WHERE channel = ?',
    );
    this.#channelPut = db.prepare(
      `INSERT INTO notify_channel_state (channel, paused_until, consecutive_failures, last_error) VALUES (?, ?, ?, ?)
       ON CONFLICT (channel) DO UPDATE SET paused_until = excluded.paused_until,
         consecutive_failures = excluded.consecutive_failures, last_error = excluded.last_error`,
    );
    this.#digestInsert = db.prepare(
      'INSERT INTO notify_digest_log (channel, day, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.#unrouted = db.prepare(
      `SELECT u.event_id, e.payload FROM unrouted_events AS u LEFT JOIN events AS e ON e.id = u.event_id
       ORDER BY u.event_id`,
    );
    this.#forgetUnrouted = db.prepare('DELETE FROM unrouted_events WHERE event_id = ?');
    this.#told = db.prepare(
      `SELECT channel FROM notification_log WHERE fingerprint = ? AND last_kind <> 'resolved'
       ORDER BY announced_at, channel`,
    );
    this.#lastNews = db.prepare(
      `SELECT MAX(id) AS id FROM events WHERE fingerprint = ? AND kind IN ('firing', 'repeat', 'escalated')`,
    );
    this.#claim = db.prepare(`UPDATE outbox SET claimed_by = ? WHERE id = ? AND status = 'pending'`);
    this.#insertReceipt = db.prepare(
      'INSERT INTO outbox_receipts (outbox_id, claimed_by, sent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.#receipts = db.prepare('SELECT outbox_id, claimed_by, sent_at FROM outbox_receipts ORDER BY outbox_id');
    this.#applyReceipt = db.prepare(
      `UPDATE outbox SET status = 'sent', sent_at = @at, attempts = attempts + 1, claimed_by = NULL, updated_at = @at
       WHERE id = @id AND status = 'pending' AND claimed_by = @by
       RETURNING fingerprint, channel`,
    );
    this.#forgetReceipt = db.prepare('DELETE FROM outbox_receipts WHERE outbox_id = ? AND claimed_by = ?');
  }

  /** Marks rows as being sent by the term `claimedBy` (still-pending ones only), just before the send. */
  claim(rows: readonly OutboxRow[], claimedBy: string): void {
    for (const r of rows) this.#claim.run(claimedBy, r.id);
  }

  /** Keeps what a sender knows: these sends were accepted (the caller's transaction, any replica's). */
  keepReceipts(receipts: readonly SendReceipt[]): void {
    for (const r of receipts) this.#insertReceipt.run(r.outboxId, r.claimedBy, r.sentAt);
  }

  /**
   * Records sent every row a receipt names that is still pending under the claim the receipt was
   * sent under (a row sent again since, or pruned, is left as it is), and forgets every receipt.
   * Answers how many rows it recorded.
   */
  applyReceipts(): number {
    let recorded = 0;
    for (const r of this.#receipts.all()) {
      const row = this.#applyReceipt.get({ id: r.outbox_id, by: r.claimed_by, at: r.sent_at });
      if (row) {
        recorded++;
        if (row.fingerprint) this.#logSent.run(r.sent_at, row.fingerprint, row.channel);
      }
      this.#forgetReceipt.run(r.outbox_id, r.claimed_by);
    }
    return recorded;
  }

  /** The channels told an alert fires and not yet that it is over, first told first. */
  toldOf(fingerprint: string): string[] {
    return this.#told.all(fingerprint).map((r) => r.channel);
  }

  /** The id of the alert's latest firing, repeat or escalated event; undefined when retention pruned them. */
  lastNewsOf(fingerprint: string): number | undefined {
    return this.#lastNews.get(fingerprint)?.id ?? undefined;
  }

  /** Writes one row; returns its id. */
  insert(row: NewOutboxRow): number {
    return this.#insert.get(row)!.id;
  }

  /** Every held row, oldest first. */
  held(): OutboxRow[] {
    return this.#held.all().map(fromDb);
  }

  /** The held rows of one alert on one channel. */
  heldFor(fingerprint: string, channel: string): OutboxRow[] {
    return this.#heldFor.all(fingerprint, channel).map(fromDb);
  }

  /** The rows one cause holds back on one channel, oldest first. */
  heldBy(causeFingerprint: string, channel: string): OutboxRow[] {
    return this.#heldBy.all(causeFingerprint, channel).map(fromDb);
  }

  /** A channel's pending rows due by `now`, oldest first. */
  due(channel: string, now: number, limit: number): OutboxRow[] {
    return this.#due.all(channel, now, limit).map(fromDb);
  }

  /** Rewrites a row's decision (a held row decided again, or superseded). */
  redecide(
    id: number,
    change: {
      status: OutboxStatus;
      decision: NotifyDecision;
      detail: string | null;
      heldBy: string | null;
      dueSince: number | null;
      nextAttemptAt: number | null;
    },
    now: number,
  ): void {
    this.#redecide.run({ id, now, ...change });
  }

  /** Marks delivered rows sent (still-pending ones only: a row is sent once). */
  markSent(rows: readonly OutboxRow[], now: number): void {
    for (const r of rows) {
      this.#markSent.run({ now, id: r.id });
      if (r.fingerprint) this.#logSent.run(now, r.fingerprint, r.channel);
    }
  }

  /** Records a failed attempt and when to try again. */
  markFailed(rows: readonly OutboxRow[], nextAttemptAt: number, error: string, now: number): void {
    for (const r of rows) this.#markFailed.run({ id: r.id, next: nextAttemptAt, error, now });
  }

  /**
   * Records a send whose receipt was never confirmed. A row sent so once is tried once more at
   * `nextAttemptAt`; a row sent so before is given up as sent (the receiver may have it twice
   * already), its reason kept in `last_error`. Answers the rows given up.
   */
  markUnconfirmed(rows: readonly OutboxRow[], nextAttemptAt: number, error: string, now: number): OutboxRow[] {
    const givenUp: OutboxRow[] = [];
    for (const r of rows) {
      if (r.unconfirmed > 0) {
        this.#giveUpUnconfirmed.run({ id: r.id, error, now });
        if (r.fingerprint) this.#logSent.run(now, r.fingerprint, r.channel);
        givenUp.push(r);
      } else this.#markUnconfirmed.run({ id: r.id, next: nextAttemptAt, error, now });
    }
    return givenUp;
  }

  /** Pending rows that became due `maxAgeMs` or longer ago. */
  expirable(now: number, maxAgeMs: number): OutboxRow[] {
    return this.#expirable.all(now - maxAgeMs).map(fromDb);
  }

  /** Gives a pending row up. */
  expire(id: number, now: number): void {
    this.#expire.run(now, id);
  }

  /** Rows pending or held, per channel. */
  waitingByChannel(): Map<string, number> {
    return new Map(this.#waiting.all().map((r) => [r.channel, r.n]));
  }

  /** What a channel was last told about an alert. */
  logEntry(fingerprint: string, channel: string): NotificationLogEntry | undefined {
    const row = this.#logGet.get(fingerprint, channel);
    return row ? { lastKind: row.last_kind as AlertEventKind, announcedAt: row.announced_at } : undefined;
  }

  /** Records that an event was decided `deliver` for a channel. */
  logAnnounced(fingerprint: string, channel: string, kind: AlertEventKind, now: number): void {
    this.#logPut.run(fingerprint, channel, kind, now);
  }

  /** Records that the alert is over for the channel, whether or not the resolve was sent. */
  logClosed(fingerprint: string, channel: string): void {
    this.#logClose.run(fingerprint, channel);
  }

  /** Closes a log key on every channel (a cause's summaries, when the cause is over). */
  logClosedEverywhere(fingerprint: string): void {
    this.#logCloseAll.run(fingerprint);
  }

  /** A channel's pause and failure streak. */
  channelState(channel: string): ChannelState {
    const row = this.#channelGet.get(channel);
    return { pausedUntil: row?.paused_until ?? null, consecutiveFailures: row?.consecutive_failures ?? 0 };
  }

  /**
   * Stores what an event or notice says, once for all the rows that will name it (in their
   * transaction); its id for {@link insert}.
   */
  insertBody(payload: string, now: number): number {
    return Number(this.#insertBody.get(payload, now)!.body_id);
  }

  /** Stores a channel's pause and failure streak. */
  setChannelState(channel: string, state: ChannelState, lastError: string | null): void {
    this.#channelPut.run(channel, state.pausedUntil, state.consecutiveFailures, lastError);
  }

  /**
   * The events left to route (`AlertStore.queueUnrouted`), oldest first; `event` undefined when
   * retention pruned it before any daemon routed it.
   */
  unrouted(): { eventId: number; event: AlertEvent | undefined }[] {
    return this.#unrouted.all().map((r) => ({
      eventId: r.event_id,
      event: r.payload === null ? undefined : { id: r.event_id, ...(JSON.parse(r.payload) as Omit<AlertEvent, 'id'>) },
    }));
  }

  /** Forgets events once routed (one statement each: a person's acknowledgements are few). */
  forgetUnrouted(eventIds: readonly number[]): void {
    for (const id of eventIds) this.#forgetUnrouted.run(id);
  }

  /** Claims the digest of (channel, local day); false when it was already queued. */
  claimDigest(channel: string, day: string, now: number): boolean {
    return this.#digestInsert.run(channel, day, now).changes > 0;
  }
}

/** One alert's notifications: every outbox row of its events, every channel, oldest first. */
export function notificationsOf(store: Store, fingerprint: string): OutboxRow[] {
  const rows = store.db
    .prepare(`SELECT * FROM outbox WHERE fingerprint = ? AND source = 'event' ORDER BY id`)
    .all(fingerprint) as DbRow[];
  return rows.map(fromDb);
}

/**
 * What was last decided for each open alert on each channel: the newest outbox row per alert and
 * channel, keyed by fingerprint (a silenced, muted or inhibited row says so, with its detail).
 */
export function latestDecisions(store: Store): Map<string, OutboxRow[]> {
  const rows = store.db
    .prepare(
      `SELECT * FROM outbox WHERE id IN (
         SELECT MAX(id) FROM outbox WHERE source = 'event'
           AND fingerprint IN (SELECT fingerprint FROM alerts WHERE status <> 'resolved')
         GROUP BY fingerprint, channel)
       ORDER BY channel`,
    )
    .all() as DbRow[];
  const out = new Map<string, OutboxRow[]>();
  for (const row of rows.map(fromDb)) {
    const key = row.fingerprint ?? '';
    out.set(key, [...(out.get(key) ?? []), row]);
  }
  return out;
}

/** What waits in the outbox of one channel: rows due to be sent, rows held back, and the oldest of them. */
export interface ChannelBacklog {
  pending: number;
  held: number;
  /** When the oldest waiting row was written. */
  oldest: number | null;
}

/** The outbox backlog by channel (only channels with something waiting). */
export function outboxBacklog(store: Store): Map<string, ChannelBacklog> {
  const rows = store.db
    .prepare(
      `SELECT channel, status, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox
       WHERE status IN ('pending', 'held') GROUP BY channel, status`,
    )
    .all() as { channel: string; status: 'pending' | 'held'; n: number; oldest: number }[];
  const out = new Map<string, ChannelBacklog>();
  for (const r of rows) {
    const b = out.get(r.channel) ?? { pending: 0, held: 0, oldest: null };
    b[r.status] = r.n;
    b.oldest = b.oldest === null ? r.oldest : Math.min(b.oldest, r.oldest);
    out.set(r.channel, b);
  }
  return out;
}

/** Every channel's delivery state (pause and failure streak, with the last error), by channel. */
export function channelStates(store: Store): Map<string, ChannelState & { lastError: string | null }> {
  const rows = store.db
    .prepare('SELECT channel, paused_until, consecutive_failures, last_error FROM notify_channel_state')
    .all() as {
    channel: string;
    paused_until: number | null;
    consecutive_failures: number;
    last_error: string | null;
  }[];
  return new Map(
    rows.map((r) => [
      r.channel,
      { pausedUntil: r.paused_until, consecutiveFailures: r.consecutive_failures, lastError: r.last_error },
    ]),
  );
}

function fromDb(row: DbRow): OutboxRow {
  return {
    id: row.id,
    channel: row.channel,
    route: row.route,
    source: row.source as OutboxRow['source'],
    eventId: row.event_id,
    fingerprint: row.fingerprint,
    kind: row.kind,
    payload: row.body_text ?? row.payload,
    groupKey: row.group_key,
    status: row.status as OutboxStatus,
    decision: row.decision as NotifyDecision,
    detail: row.detail,
    heldBy: row.held_by,
    attempts: row.attempts,
    unconfirmed: row.unconfirmed,
    createdAt: row.created_at,
    dueSince: row.due_since,
    nextAttemptAt: row.next_attempt_at,
    sentAt: row.sent_at,
    lastError: row.last_error,
    claimedBy: row.claimed_by,
  };
}

/**
 * The alerts a channel was told fire and not yet that they are over, and that still fire: the
 * latest event of each that said so (firing, repeat or escalated). A channel that must send a
 * group whole (the webhook: Alertmanager's receivers close an incident when a group's payload says
 * `resolved`) adds them to a message that carries only some of the group's events.
 */
export function announcedFiring(store: Store, channel: string): AlertEvent[] {
  return store.db
    .prepare<[string], { payload: string }>(
      `SELECT e.payload AS payload
         FROM notification_log l
         JOIN alerts a ON a.fingerprint = l.fingerprint AND a.status = 'firing'
         JOIN events e ON e.id = (
           SELECT MAX(id) FROM events
            WHERE fingerprint = l.fingerprint AND kind IN ('firing', 'repeat', 'escalated'))
        WHERE l.channel = ? AND l.last_kind <> 'resolved'
        ORDER BY e.id`,
    )
    .all(channel)
    .map((r) => JSON.parse(r.payload) as AlertEvent);
}
