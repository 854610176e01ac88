/**
 * The notification tables' SQL (migration 003), prepared once per open {@link Store}: the outbox,
 * the per-(fingerprint, channel) notification log, channel pauses and the digest log. Row ⇄ object
 * mapping lives here and nowhere else; the decisions live in `outbox.ts` and `delivery.ts`.
 */
import { latestWaitEnd } from '../lib/clock.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { AlertEvent, AlertEventKind } from '../alerts/alert-event.js';
import type { Store } from '../state/store.js';
import type { SqlDatabase } from '../state/sql-database.js';
import { IN_LIST, inBatches } from '../state/in-list.js';
import type { NotificationLogEntry, NotifyDecision } from './delivery-decision.js';
import { camelRow } from '../state/camel-row.js';
import { sqlDialect } from '../state/sql-dialect.js';

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

/** What a row's decision sets (`redecide`). */
type RowDecisionField = 'status' | 'decision' | 'detail' | 'heldBy' | 'dueSince' | 'nextAttemptAt';

/** A new row, before it has an id: its body stored first ({@link OutboxStore.insertBody}) and named. */
export type NewOutboxRow = Omit<
  OutboxRow,
  'id' | 'attempts' | 'unconfirmed' | 'sentAt' | 'lastError' | 'payload' | 'claimedBy'
> & {
  body: StoredBody;
};

/**
 * A body {@link OutboxStore.insertBody} stored; its id is known once its insert was sent. Its rows
 * are written in the transaction that stored it (a row named as "the last body" in a later one
 * could name another connection's).
 */
export interface StoredBody {
  id(): number;
}

/**
 * The body each connection stored last, which a row may name without its id: see
 * {@link OutboxStore.insert}. By connection, not by store: the SQL's "last" is the connection's.
 */
const lastBodies = new WeakMap<SqlDatabase, StoredBody>();

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

/** An outbox row as read: its columns by their SQL names. */
type DbRow = Record<string, unknown>;

/** The insert of an outbox row whose `body_id` is the SQL expression `bodyId`. */
function insertRow(bodyId: string): string {
  return `INSERT INTO outbox (channel, route, source, event_id, fingerprint, kind, payload, body_id, group_key, status,
         decision, detail, held_by, created_at, due_since, next_attempt_at, updated_at)
       VALUES (@channel, @route, @source, @eventId, @fingerprint, @kind, '', ${bodyId}, @groupKey, @status,
         @decision, @detail, @heldBy, @createdAt, @dueSince, @nextAttemptAt, @createdAt)
       RETURNING id`;
}

/**
 * The update of a still-pending row after an attempt to send it (`set`: what the attempt made of
 * it): the attempt counted, the row's claim ended.
 */
function attempted(set: string): string {
  return `UPDATE outbox SET ${set}, attempts = attempts + 1, claimed_by = NULL, updated_at = @now
       WHERE id = @id AND status = 'pending'`;
}

/** What {@link attempted} sets of a row sent, and of one to try again at `@next`. */
const SENT = "status = 'sent', sent_at = @now";
const RETRY = 'next_attempt_at = @next, last_error = @error';

/** The statements of {@link OutboxStore}, prepared once per open store. */
function prepareOutbox(db: SqlDatabase) {
  return {
    insert: db.prepare<Omit<NewOutboxRow, 'body'> & { bodyId: number }, { id: number }>(insertRow('@bodyId')),
    insertNamingLastBody: db.prepare<Omit<NewOutboxRow, 'body'>, { id: number }>(
      insertRow(sqlDialect(db.engine).lastRowId('outbox_bodies', 'body_id')),
    ),
    insertBody: db.prepare<[string, number], { body_id: number }>(
      'INSERT INTO outbox_bodies (body, stored_at) VALUES (?, ?) RETURNING body_id',
    ),
    held: db.prepare<[number, number], DbRow>(
      `${WITH_BODY} WHERE o.status = 'held' AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= ? OR o.next_attempt_at > ?)
       ORDER BY o.id`,
    ),
    heldFor: db.prepare<[string, string], DbRow>(
      `${WITH_BODY} WHERE o.status = 'held' AND o.fingerprint = ? AND o.channel = ? ORDER BY o.id`,
    ),
    heldBy: db.prepare<[string, string], DbRow>(
      `${WITH_BODY} WHERE o.status = 'held' AND o.held_by = ? AND o.channel = ? ORDER BY o.id`,
    ),
    due: db.prepare<[string, number, number, number], DbRow>(
      `${WITH_BODY} WHERE o.status = 'pending' AND o.channel = ? AND (o.next_attempt_at <= ? OR o.next_attempt_at > ?)
       ORDER BY o.id LIMIT ?`,
    ),
    redecide: db.prepare(
      `UPDATE outbox SET status = @status, decision = @decision, detail = @detail, held_by = @heldBy,
         due_since = @dueSince, next_attempt_at = @nextAttemptAt, updated_at = @now WHERE id = @id`,
    ),
    markSent: db.prepare<{ now: number; id: number }>(attempted(SENT)),
    markFailed: db.prepare<{ id: number; next: number; error: string; now: number }>(attempted(RETRY)),
    markUnconfirmed: db.prepare<{ id: number; next: number; error: string; now: number }>(
      attempted(`${RETRY}, unconfirmed = unconfirmed + 1`),
    ),
    giveUpUnconfirmed: db.prepare<{ id: number; error: string; now: number }>(
      attempted(`${SENT}, last_error = @error, unconfirmed = unconfirmed + 1`),
    ),
    expirable: db.prepare<[number], DbRow>(
      `${WITH_BODY} WHERE o.status = 'pending' AND o.due_since <= ? ORDER BY o.id`,
    ),
    expire: db.prepare<[number, number]>(
      `UPDATE outbox SET status = 'expired', updated_at = ? WHERE id = ? AND status = 'pending'`,
    ),
    backlog: db.prepare<[], { channel: string; status: 'pending' | 'held'; n: number; oldest: number }>(
      `SELECT channel, status, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox
       WHERE status IN ('pending', 'held') GROUP BY channel, status`,
    ),
    logAmong: db.prepare<string[], { fingerprint: string; channel: string; last_kind: string; announced_at: number }>(
      `SELECT fingerprint, channel, last_kind, announced_at FROM notification_log WHERE fingerprint ${IN_LIST}`,
    ),
    heldAmong: db.prepare<string[], { fingerprint: string }>(
      `SELECT DISTINCT fingerprint FROM outbox WHERE status = 'held' AND fingerprint ${IN_LIST}`,
    ),
    logGet: db.prepare<[string, string], { last_kind: string; announced_at: number }>(
      'SELECT last_kind, announced_at FROM notification_log WHERE fingerprint = ? AND channel = ?',
    ),
    logPut: db.prepare<[string, string, string, number]>(
      `INSERT INTO notification_log (fingerprint, channel, last_kind, announced_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (fingerprint, channel) DO UPDATE SET last_kind = excluded.last_kind, announced_at = excluded.announced_at`,
    ),
    logClose: db.prepare<[string, string]>(
      `UPDATE notification_log SET last_kind = 'resolved' WHERE fingerprint = ? AND channel = ?`,
    ),
    logCloseAll: db.prepare<[string]>(`UPDATE notification_log SET last_kind = 'resolved' WHERE fingerprint = ?`),
    logSent: db.prepare<[number, string, string]>(
      'UPDATE notification_log SET last_sent_at = ? WHERE fingerprint = ? AND channel = ?',
    ),
    channelGet: db.prepare<[string], { paused_until: number | null; consecutive_failures: number }>(
      'SELECT paused_until, consecutive_failures FROM notify_channel_state WHERE channel = ?',
    ),
    channelPut: db.prepare<[string, number | null, number, string | null]>(
      `INSERT INTO notify_channel_state (channel, paused_until, consecutive_failures, last_error) VALUES (?, ?, ?, ?)
       ON CONFLICT (channel) DO UPDATE SET paused_until = excluded.paused_until,
         consecutive_failures = excluded.consecutive_failures, last_error = excluded.last_error`,
    ),
    channelResume: db.prepare<[string]>('UPDATE notify_channel_state SET paused_until = NULL WHERE channel = ?'),
    channelsResume: db.prepare('UPDATE notify_channel_state SET paused_until = NULL WHERE paused_until IS NOT NULL'),
    failedDueNow: db.prepare<[number, number]>(
      `UPDATE outbox SET next_attempt_at = ? WHERE status = 'pending' AND last_error IS NOT NULL AND next_attempt_at > ?`,
    ),
    digestInsert: db.prepare<[string, string, number]>(
      'INSERT INTO notify_digest_log (channel, day, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    unrouted: db.prepare<[], { event_id: number; payload: string | null }>(
      `SELECT u.event_id, e.payload FROM unrouted_events AS u LEFT JOIN events AS e ON e.id = u.event_id
       ORDER BY u.event_id`,
    ),
    forgetUnrouted: db.prepare<[number]>('DELETE FROM unrouted_events WHERE event_id = ?'),
    told: db.prepare<[string], { channel: string }>(
      `SELECT channel FROM notification_log WHERE fingerprint = ? AND last_kind <> 'resolved'
       ORDER BY announced_at, channel`,
    ),
    lastNews: db.prepare<[string], { id: number | null }>(
      `SELECT MAX(id) AS id FROM events WHERE fingerprint = ? AND kind IN ('firing', 'repeat', 'escalated')`,
    ),
    claim: db.prepare<[string, number]>(`UPDATE outbox SET claimed_by = ? WHERE id = ? AND status = 'pending'`),
    insertReceipt: db.prepare<[number, string, number]>(
      'INSERT INTO outbox_receipts (outbox_id, claimed_by, sent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    receipts: db.prepare<[], { outbox_id: number; claimed_by: string; sent_at: number }>(
      'SELECT outbox_id, claimed_by, sent_at FROM outbox_receipts ORDER BY outbox_id',
    ),
    applyReceipt: db.prepare<{ id: number; by: string; now: number }, { fingerprint: string | null; channel: string }>(
      `${attempted(SENT)} AND claimed_by = @by RETURNING fingerprint, channel`,
    ),
    forgetReceipt: db.prepare<[number, string]>('DELETE FROM outbox_receipts WHERE outbox_id = ? AND claimed_by = ?'),
  };
}

/** The prepared statements of the notification tables for one open store. */
export class OutboxStore {
  readonly db: SqlDatabase;
  readonly #q: ReturnType<typeof prepareOutbox>;

  constructor(readonly store: Store) {
    this.db = store.db;
    this.#q = prepareOutbox(this.db);
  }

  /** Marks rows as being sent by the term `claimedBy` (still-pending ones only), just before the send. */
  claim(rows: readonly OutboxRow[], claimedBy: string): void {
    for (const r of rows) this.#q.claim.run(claimedBy, r.id);
  }

  /** Keeps what a sender knows: these sends were accepted (the caller's transaction, any replica's). */
  keepReceipts(receipts: readonly SendReceipt[]): void {
    for (const r of receipts) this.#q.insertReceipt.run(r.outboxId, r.claimedBy, r.sentAt);
  }

  /**
   * Records sent every row a receipt names that is still pending under the claim the receipt was
   * sent under (a row sent again since, or pruned, is left as it is), and forgets every receipt.
   * Answers how many rows it recorded.
   */
  applyReceipts(): number {
    let recorded = 0;
    for (const r of this.#q.receipts.all()) {
      const row = this.#q.applyReceipt.get({ id: r.outbox_id, by: r.claimed_by, now: r.sent_at });
      if (row) {
        recorded++;
        if (row.fingerprint) this.#q.logSent.run(r.sent_at, row.fingerprint, row.channel);
      }
      this.#q.forgetReceipt.run(r.outbox_id, r.claimed_by);
    }
    return recorded;
  }

  /** The channels told an alert fires and not yet that it is over, first told first. */
  toldOf(fingerprint: string): string[] {
    return this.#q.told.all(fingerprint).map((r) => r.channel);
  }

  /** The id of the alert's latest firing, repeat or escalated event; undefined when retention pruned them. */
  lastNewsOf(fingerprint: string): number | undefined {
    return this.#q.lastNews.get(fingerprint)?.id ?? undefined;
  }

  /**
   * Writes one row; the function returned gives its id. On PostgreSQL, inside a transaction, the
   * insert is held back with the rest of its writes, and only that call waits for it. A row of
   * the body its connection stored last names it as that (`SqlDialect.lastRowId`), not by its id:
   * reading the id would wait for the body's insert, one round trip per event in a storm.
   */
  insert({ body, ...row }: NewOutboxRow): () => number {
    const written =
      this.db.inTransaction && lastBodies.get(this.db) === body
        ? this.#q.insertNamingLastBody.run(row)
        : this.#q.insert.run({ ...row, bodyId: body.id() });
    return () => Number(written.lastInsertRowid);
  }

  /**
   * The held rows to decide again at `now`, oldest first: all but those whose decision only time
   * changes and whose time has not come (a repeat waiting for its route's interval). A row held
   * further ahead than `longestMs` (the longest wait any route sets) is decided again too: the
   * clock went back since it was held.
   */
  held(now: number, longestMs: number): OutboxRow[] {
    return this.#q.held.all(now, latestWaitEnd(now, longestMs)).map(fromDb);
  }

  /** The held rows of one alert on one channel. */
  heldFor(fingerprint: string, channel: string): OutboxRow[] {
    return this.#q.heldFor.all(fingerprint, channel).map(fromDb);
  }

  /** The rows one cause holds back on one channel, oldest first. */
  heldBy(causeFingerprint: string, channel: string): OutboxRow[] {
    return this.#q.heldBy.all(causeFingerprint, channel).map(fromDb);
  }

  /**
   * A channel's pending rows due by `now`, oldest first, and those due further ahead than
   * `longestMs` (the longest wait a retry sets): the clock went back since they were put off.
   */
  due(channel: string, now: number, limit: number, longestMs: number): OutboxRow[] {
    return this.#q.due.all(channel, now, latestWaitEnd(now, longestMs), limit).map(fromDb);
  }

  /** Rewrites a row's decision (a held row decided again, or superseded). */
  redecide(id: number, change: Pick<OutboxRow, RowDecisionField>, now: number): void {
    this.#q.redecide.run({ id, now, ...change });
  }

  /** Marks delivered rows sent (still-pending ones only: a row is sent once). */
  markSent(rows: readonly OutboxRow[], now: number): void {
    for (const r of rows) {
      this.#q.markSent.run({ now, id: r.id });
      if (r.fingerprint) this.#q.logSent.run(now, r.fingerprint, r.channel);
    }
  }

  /** Records a failed attempt and when to try again. */
  markFailed(rows: readonly OutboxRow[], nextAttemptAt: number, error: string, now: number): void {
    for (const r of rows) this.#q.markFailed.run({ id: r.id, next: nextAttemptAt, error, now });
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
        this.#q.giveUpUnconfirmed.run({ id: r.id, error, now });
        if (r.fingerprint) this.#q.logSent.run(now, r.fingerprint, r.channel);
        givenUp.push(r);
      } else this.#q.markUnconfirmed.run({ id: r.id, next: nextAttemptAt, error, now });
    }
    return givenUp;
  }

  /** Pending rows that became due `maxAgeMs` or longer ago. */
  expirable(now: number, maxAgeMs: number): OutboxRow[] {
    return this.#q.expirable.all(now - maxAgeMs).map(fromDb);
  }

  /** Gives a pending row up. */
  expire(id: number, now: number): void {
    this.#q.expire.run(now, id);
  }

  /** What waits in the outbox, by channel (only channels with something waiting). */
  backlog(): Map<string, ChannelBacklog> {
    const out = new Map<string, ChannelBacklog>();
    for (const r of this.#q.backlog.all()) {
      const b = getOrAdd(out, r.channel, () => ({ pending: 0, held: 0, oldest: null }));
      b[r.status] = r.n;
      b.oldest = b.oldest === null ? r.oldest : Math.min(b.oldest, r.oldest);
    }
    return out;
  }

  /**
   * What every channel was last told of each of `fingerprints` (see {@link logEntry}), by
   * fingerprint then channel: one read per `IN_BATCH` (`in-list.ts`), for a pass of many events.
   */
  logEntriesAmong(fingerprints: readonly string[]): Map<string, Map<string, NotificationLogEntry>> {
    const rows = [...inBatches(fingerprints)].flatMap((batch) => this.#q.logAmong.all(...batch));
    const out = new Map<string, Map<string, NotificationLogEntry>>();
    for (const row of rows) getOrAdd(out, row.fingerprint, () => new Map()).set(row.channel, logEntryOf(row));
    return out;
  }

  /** Which of `fingerprints` have held rows on some channel: one read per `IN_BATCH`. */
  heldAmong(fingerprints: readonly string[]): Set<string> {
    const rows = [...inBatches(fingerprints)].flatMap((batch) => this.#q.heldAmong.all(...batch));
    return new Set(rows.map((r) => r.fingerprint));
  }

  /** What a channel was last told about an alert. */
  logEntry(fingerprint: string, channel: string): NotificationLogEntry | undefined {
    const row = this.#q.logGet.get(fingerprint, channel);
    return row ? logEntryOf(row) : undefined;
  }

  /** Records that an event was decided `deliver` for a channel. */
  logAnnounced(fingerprint: string, channel: string, kind: AlertEventKind, now: number): void {
    this.#q.logPut.run(fingerprint, channel, kind, now);
  }

  /** Records that the alert is over for the channel, whether or not the resolve was sent. */
  logClosed(fingerprint: string, channel: string): void {
    this.#q.logClose.run(fingerprint, channel);
  }

  /** Closes a log key on every channel (a cause's summaries, when the cause is over). */
  logClosedEverywhere(fingerprint: string): void {
    this.#q.logCloseAll.run(fingerprint);
  }

  /** A channel's pause and failure streak. */
  channelState(channel: string): ChannelState {
    const row = this.#q.channelGet.get(channel);
    return { pausedUntil: row?.paused_until ?? null, consecutiveFailures: row?.consecutive_failures ?? 0 };
  }

  /**
   * Stores what an event or notice says, once for all the rows that will name it (in their
   * transaction), which {@link insert} names. Held back on PostgreSQL, as the rows are.
   */
  insertBody(payload: string, now: number): StoredBody {
    const written = this.#q.insertBody.run(payload, now);
    const body = { id: () => Number(written.lastInsertRowid) };
    lastBodies.set(this.db, body);
    return body;
  }

  /** Ends a channel's pause early (the clock went back), keeping its failure streak and last error. */
  resumeChannel(channel: string): void {
    this.#q.channelResume.run(channel);
  }

  /**
   * Every channel's pause ended and every failed row due `now`: at a start or reload, where the
   * config that failed (a password, a webhook URL) may just have been fixed.
   */
  retryFailedNow(now: number): void {
    this.#q.channelsResume.run();
    this.#q.failedDueNow.run(now, now);
  }

  /** Stores a channel's pause and failure streak. */
  setChannelState(channel: string, state: ChannelState, lastError: string | null): void {
    this.#q.channelPut.run(channel, state.pausedUntil, state.consecutiveFailures, lastError);
  }

  /**
   * The events left to route (`AlertStore.queueUnrouted`), oldest first; `event` undefined when
   * retention pruned it before any daemon routed it.
   */
  unrouted(): { eventId: number; event: AlertEvent | undefined }[] {
    return this.#q.unrouted.all().map((r) => ({
      eventId: r.event_id,
      event: r.payload === null ? undefined : { id: r.event_id, ...(JSON.parse(r.payload) as Omit<AlertEvent, 'id'>) },
    }));
  }

  /** Forgets events once routed (one statement each: a person's acknowledgements are few). */
  forgetUnrouted(eventIds: readonly number[]): void {
    for (const id of eventIds) this.#q.forgetUnrouted.run(id);
  }

  /** Claims the digest of (channel, local day); false when it was already queued. */
  claimDigest(channel: string, day: string, now: number): boolean {
    return this.#q.digestInsert.run(channel, day, now).changes > 0;
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
  for (const row of rows.map(fromDb)) getOrAdd(out, row.fingerprint ?? '', () => []).push(row);
  return out;
}

/** What waits in the outbox of one channel: rows due to be sent, rows held back, and the oldest of them. */
export interface ChannelBacklog {
  pending: number;
  held: number;
  /** When the oldest waiting row was written. */
  oldest: number | null;
}

/** Every channel's delivery state (pause and failure streak, with the last error), by channel. */
export function channelStates(store: Store): Map<string, ChannelState & { lastError: string | null }> {
  const rows = store.db
    .prepare('SELECT channel, paused_until, consecutive_failures, last_error FROM notify_channel_state')
    .all() as DbRow[];
  return new Map(
    rows.map(({ channel, ...r }) => [channel as string, camelRow<ChannelState & { lastError: string | null }>(r)]),
  );
}

/** A row as the code sees it: its body's text, where the read joined it, as its payload. */
function fromDb({ updated_at: _updated, body_id: _body, body_text: bodyText, ...row }: DbRow): OutboxRow {
  const out = camelRow<OutboxRow>(row);
  return typeof bodyText === 'string' ? { ...out, payload: bodyText } : out;
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

/** A notification log row as {@link OutboxStore.logEntry} gives it. */
function logEntryOf(row: { last_kind: string; announced_at: number }): NotificationLogEntry {
  return { lastKind: row.last_kind as AlertEventKind, announcedAt: row.announced_at };
}
