/**
 * The alert lifecycle's SQL, prepared once per open {@link Store}: the composition root builds one
 * `AlertStore` and hands it to every cycle, so a cycle runs prepared statements only. Row ⇄ object
 * mapping (JSON columns, INTEGER ms times) lives here and nowhere else.
 */
import type { CheckName } from '../detectors/registry.js';
import type { Finding } from '../detectors/finding.js';
import { SEVERITY_RANK, type Fact, type Labels, type Severity, type Subject } from '../lib/alert-vocabulary.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { Store } from '../state/store.js';
import { prepareAll, sql, type Prepared } from '../state/prepare-all.js';
import { IN_LIST, inBatches } from '../state/in-list.js';
import { snakeColumn } from '../state/camel-row.js';
import type { AcknowledgementNote, AcknowledgeSurface, AlertEvent, AlertEventKind } from './alert-event.js';
import { shownDetails } from './held-subjects.js';

/** Where an alert is in its life. */
export type AlertStatus = 'pending' | 'firing' | 'resolved';

/** The acknowledgement in force on a firing alert (state version 9): who took it, where, when (ms), why. */
export interface Acknowledgement {
  by: string;
  via: AcknowledgeSurface;
  at: number;
  /** Null when they gave none. */
  comment: string | null;
}

/** What an alert row keeps of its finding as it was last seen, as the finding says it. */
type FindingFacts = Pick<Finding, 'fingerprint' | 'check' | 'severity' | 'summary' | 'details' | 'labels'>;

/** One row of the `alerts` table, as the code sees it (times in ms since the epoch). */
export interface AlertRow extends FindingFacts {
  /** The job whose complete snapshots decide this alert; only that job's snapshots resolve it. */
  job: string;
  status: AlertStatus;
  url: string | null;
  since: string | null;
  subject: Subject | null;
  /** What a reader is shown under the summary; null in a row written before alerts kept them (state version 6). */
  facts: Fact[] | null;
  /** The one-line form for compact messages; null: the summary. */
  brief: string | null;
  /** First sighting of this life of the alert. */
  firstSeenAt: number;
  lastSeenAt: number;
  /** Consecutive complete snapshots this life has been seen in. */
  seenCount: number;
  firedAt: number | null;
  /** When a firing, repeat or escalated event was last written. */
  lastNotifiedAt: number | null;
  resolvedAt: number | null;
  /**
   * Someone took it: its repeats stop until it resolves or escalates, which end it. Null when
   * nobody has (and always on a pending or resolved alert).
   */
  acknowledgement: Acknowledgement | null;
  /**
   * What a pending alert waits for beyond `alerts.for`: the hold its detector asked for, until when
   * (ms), and why (state version 15). Null or absent: no hold (always on a row written before).
   */
  hold?: AlertHold | null;
}

/**
 * The hold a pending alert waits out: until when (ms since the epoch), and what for. `until` null:
 * held as long as its reason lasts, with no end time (a failed run running again: a retry's outcome
 * decides, not a clock).
 */
export interface AlertHold {
  until: number | null;
  /** Null: the check's wait, unnamed. */
  reason: string | null;
}

/**
 * The fields a new life writes (no acknowledgement yet), in column order, each bound by its name:
 * its column is the field's `snakeColumn`.
 */
const LIFE_FIELDS = (
  'fingerprint job checkName status severity summary details labels url since subject facts brief ' +
  'firstSeenAt lastSeenAt seenCount firedAt lastNotifiedAt resolvedAt holdUntil holdReason'
).split(' ');
const LIFE_COLUMNS = LIFE_FIELDS.map(snakeColumn);

/** The fields a sighting of an open alert rewrites: what its finding says now, its counters and times. */
const OPEN_FIELDS = (
  'status severity summary details labels url since subject facts brief ' +
  'firstSeenAt lastSeenAt seenCount firedAt lastNotifiedAt'
).split(' ');

/** The column order `fromRow` reads: {@link LIFE_COLUMNS}, then the acknowledgement's. */
const READ_COLUMNS = `${LIFE_COLUMNS.join(', ')}, acknowledged_at, acknowledged_by, acknowledged_via, acknowledge_comment`;

/** Sets the acknowledgement columns to none (a resolve, an escalation, a new life). */
const NO_ACKNOWLEDGEMENT =
  'acknowledged_at = NULL, acknowledged_by = NULL, acknowledged_via = NULL, acknowledge_comment = NULL';

/** `meta` key prefix of a job's count of consecutive suspect cycles. */
const SUSPECT_CYCLES_KEY = 'resolve_guard:';

/** Firing alerts of one check and severity, and how many of them someone acknowledged. */
export interface FiringCount {
  check: string;
  severity: string;
  n: number;
  acknowledged: number;
}

/** A row of an open alert's subject and details, as {@link SQL}'s `select…Subjects` read it. */
type SubjectRow = { check: string; subject: string; details: string };

/** The SQL of the `alerts` and `events` tables, prepared once per store ({@link AlertStore}). */
const SQL = {
  selectOpenByJob: sql<[string], unknown[]>(
    `SELECT ${READ_COLUMNS} FROM alerts WHERE job = ? AND status <> 'resolved'`,
  ),
  selectOpen: sql<[], unknown[]>(`SELECT ${READ_COLUMNS} FROM alerts WHERE status <> 'resolved'`),
  selectOpenSubjects: sql<[string], SubjectRow>(
    `SELECT check_name AS "check", subject, details FROM alerts WHERE job = ? AND status <> 'resolved' AND subject IS NOT NULL`,
  ),
  selectOtherSubjects: sql<[string], SubjectRow>(
    `SELECT check_name AS "check", subject, details FROM alerts WHERE job <> ? AND status <> 'resolved' AND subject IS NOT NULL`,
  ),
  selectOne: sql<[string], unknown[]>(`SELECT ${READ_COLUMNS} FROM alerts WHERE fingerprint = ?`),
  // A new life overwrites a resolved row of the same fingerprint, but never an open one: an
  // open row belongs to the job that opened it, and another job's snapshot must not take it over.
  startLife: sql<StoredAlert>(`INSERT INTO alerts (${LIFE_COLUMNS.join(', ')}) VALUES (@${LIFE_FIELDS.join(', @')})
     ON CONFLICT (fingerprint) DO UPDATE SET
       ${LIFE_COLUMNS.slice(1)
         .map((c) => `${c} = excluded.${c}`)
         .join(', ')}, ${NO_ACKNOWLEDGEMENT}
     WHERE alerts.status = 'resolved'`),
  updateOpen: sql<StoredAlert>(
    `UPDATE alerts SET ${OPEN_FIELDS.map((f) => `${snakeColumn(f)} = @${f}`).join(', ')} WHERE fingerprint = @fingerprint`,
  ),
  resolve: sql<[number, string]>(
    `UPDATE alerts SET status = 'resolved', resolved_at = ?, ${NO_ACKNOWLEDGEMENT} WHERE fingerprint = ?`,
  ),
  drop: sql<[string]>('DELETE FROM alerts WHERE fingerprint = ?'),
  close: sql<
    [number, string, string]
  >(`UPDATE alerts SET status = 'resolved', resolved_at = ?, details = ?, ${NO_ACKNOWLEDGEMENT}
     WHERE fingerprint = ? AND status = 'firing'`),
  // One statement for every IN_BATCH alerts merely seen again (`in-list.ts`).
  touch: sql<[number, ...string[]]>(`UPDATE alerts SET last_seen_at = ?, seen_count = seen_count + 1
     WHERE fingerprint ${IN_LIST}`),
  selectOpenAmong: sql<string[], { fingerprint: string }>(
    `SELECT fingerprint FROM alerts WHERE status <> 'resolved' AND fingerprint ${IN_LIST}`,
  ),
  insertEvent: sql<[string, string, number, string], { id: number }>(
    'INSERT INTO events (fingerprint, kind, at, payload) VALUES (?, ?, ?, ?) RETURNING id',
  ),
  // The announcements of one life: its firing and escalations, written at or after it fired.
  selectTold: sql<[string, number], { payload: string }>(
    `SELECT payload FROM events WHERE fingerprint = ? AND at >= ? AND kind IN ('firing', 'escalated')`,
  ),
  queueUnrouted: sql<[number, number]>('INSERT INTO unrouted_events (event_id, queued_at) VALUES (?, ?)'),
  setHold: sql<[number | null, string | null, string]>(
    'UPDATE alerts SET hold_until = ?, hold_reason = ? WHERE fingerprint = ?',
  ),
  firingCounts: sql<[], FiringCount>(
    `SELECT check_name AS "check", severity, COUNT(*) AS n, COUNT(acknowledged_at) AS acknowledged
     FROM alerts WHERE status = 'firing' GROUP BY check_name, severity`,
  ),
  setAcknowledgement: sql<{ [K in keyof Acknowledgement]: Acknowledgement[K] | null } & { fingerprint: string }>(
    `UPDATE alerts SET acknowledged_at = @at, acknowledged_by = @by, acknowledged_via = @via, acknowledge_comment = @comment
     WHERE fingerprint = @fingerprint`,
  ),
};

/**
 * The statements read as raw (array) rows: better-sqlite3 building 19-key objects is the largest
 * cost of a 10,000-alert cycle, and `fromRow` maps the columns by position anyway.
 */
const RAW_ROWS = ['selectOpenByJob', 'selectOpen', 'selectOne'] as const;

/** The prepared statements of the `alerts` and `events` tables for one open store. */
export class AlertStore {
  readonly #sql: Prepared<typeof SQL>;

  constructor(readonly store: Store) {
    this.#sql = prepareAll(store.db, SQL);
    for (const name of RAW_ROWS) this.#sql[name].raw(true);
  }

  /** Firing alerts counted by check and severity, and how many of them are acknowledged (the gauges). */
  firingCounts(): FiringCount[] {
    return this.#sql.firingCounts.all();
  }

  /**
   * Consecutive cycles of a job whose resolutions the resolve guard held (`resolve-guard.ts`); 0
   * when its last cycle was plausible. Kept in the state so a restart does not reset the count.
   */
  suspectCycles(job: string): number {
    return Number(this.store.getMeta(`${SUSPECT_CYCLES_KEY}${job}`) ?? 0) || 0;
  }

  /** Sets the count of {@link suspectCycles}; 0 forgets it. */
  setSuspectCycles(job: string, cycles: number): void {
    this.store.setMeta(`${SUSPECT_CYCLES_KEY}${job}`, cycles === 0 ? undefined : String(cycles));
  }

  /**
   * The job's pending and firing alerts, keyed by fingerprint: one SELECT per cycle. `skip` leaves
   * out the fingerprints the caller has no use for before their rows are built (the JSON columns
   * parsed): in a steady cycle, nearly every alert is still found.
   */
  openByJob(job: string, skip?: (fingerprint: string) => boolean): Map<string, AlertRow> {
    const out = new Map<string, AlertRow>();
    for (const values of this.#sql.selectOpenByJob.iterate(job)) {
      if (skip?.(values[0] as string)) continue;
      const row = fromRow(values);
      out.set(row.fingerprint, row);
    }
    return out;
  }

  /**
   * What the job's pending and firing alerts are about (the ones that name a record), with their
   * details: what an alert last said of its record (failed_runs follows a run through its retries).
   */
  openSubjectsByJob(job: string): OpenSubjectRow[] {
    return this.#sql.selectOpenSubjects.all(job).map(openSubjectOf);
  }

  /**
   * What the pending and firing alerts of every other job are about (the ones that name a record),
   * with their details: what the rest of the daemon reports, which the attention and upgrades
   * checks fold their own findings into.
   */
  openSubjectsOutside(job: string): OpenSubjectRow[] {
    return this.#sql.selectOtherSubjects.all(job).map(openSubjectOf);
  }

  /** Records one more sighting of open alerts whose content did not change. */
  touch(fingerprints: readonly string[], at: number): void {
    for (const batch of inBatches(fingerprints)) this.#sql.touch.run(at, ...batch);
  }

  /**
   * Which of `fingerprints` are open (pending or firing), under whatever job: one read per
   * `IN_BATCH` (`in-list.ts`), so that a cycle's new alerts are written without a read each.
   */
  openAmong(fingerprints: readonly string[]): Set<string> {
    const rows = [...inBatches(fingerprints)].flatMap((batch) => this.#sql.selectOpenAmong.all(...batch));
    return new Set(rows.map((r) => r.fingerprint));
  }

  /** Every pending and firing alert: firing before pending, worst severity first, oldest first. */
  open(): AlertRow[] {
    return this.#sql.selectOpen.all().map(fromRow).sort(byImportance);
  }

  /**
   * Every label name with the values the state file's alerts give it: open ones, and resolved ones
   * until retention prunes them. Read once per `silence`, not per cycle, so prepared on the spot.
   */
  labelValues(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    // Read whole and taken apart here: the engines share no function that lists a JSON object's keys.
    for (const { labels } of this.store.db.prepare<[], { labels: string }>('SELECT labels FROM alerts').iterate()) {
      for (const [name, value] of Object.entries(JSON.parse(labels) as Record<string, unknown>)) {
        if (typeof value === 'string') getOrAdd(out, name, () => new Set<string>()).add(value);
      }
    }
    return out;
  }

  /** One alert by fingerprint, in whatever status (resolved ones until retention prunes them). */
  get(fingerprint: string): AlertRow | undefined {
    const row = this.#sql.selectOne.get(fingerprint);
    return row ? fromRow(row) : undefined;
  }

  /**
   * The fingerprints, resolved alerts' too, that `matches` takes, sorted: for a short id a person
   * typed (`findAlert`). A short id is a hash of the fingerprint stored nowhere, so the
   * fingerprints are read through, from the primary key's index alone; a Slack click never comes
   * here (it looks among the alerts of the message clicked).
   */
  fingerprintsWhere(matches: (fingerprint: string) => boolean): string[] {
    const found: string[] = [];
    for (const { fingerprint } of this.store.db
      .prepare<[], { fingerprint: string }>('SELECT fingerprint FROM alerts')
      .iterate()) {
      if (matches(fingerprint)) found.push(fingerprint);
    }
    return found.sort();
  }

  /**
   * Writes a new life of an alert, over a resolved row of the same fingerprint if there is one. A
   * fingerprint open under another job is left as it is: the caller asks {@link openAmong} first,
   * so that this write never waits for an answer (on PostgreSQL it is held back with the rest).
   */
  startLife(row: AlertRow): void {
    this.#sql.startLife.run(stored(row));
  }

  /** Rewrites the changing fields of an open alert that was seen again. */
  updateOpen(row: AlertRow): void {
    this.#sql.updateOpen.run(stored(row));
  }

  /** Marks a firing alert resolved; the row stays until retention. */
  resolve(fingerprint: string, at: number): void {
    this.#sql.resolve.run(at, fingerprint);
  }

  /**
   * Ends a firing alert without an event: the row is resolved with the reason in its details
   * (`closed`), and nothing is announced. For alerts the configuration no longer looks at.
   */
  close(fingerprint: string, reason: string, at: number): void {
    const row = this.get(fingerprint);
    if (row?.status !== 'firing') return;
    this.#sql.close.run(at, JSON.stringify({ ...row.details, closed: reason }), fingerprint);
  }

  /**
   * Leaves an event written outside a cycle (an acknowledgement) for the daemon's outbox to route
   * at its next delivery round: call in the transaction that wrote the event.
   */
  queueUnrouted(eventId: number, at: number): void {
    this.#sql.queueUnrouted.run(eventId, at);
  }

  /** Sets (or, with null, ends) the acknowledgement of an alert's current life. */
  setAcknowledgement(fingerprint: string, ack: Acknowledgement | null): void {
    this.#sql.setAcknowledgement.run({ at: null, by: null, via: null, comment: null, ...ack, fingerprint });
  }

  /** Sets (or, with null, ends) what a pending alert waits for ({@link AlertHold}). */
  setHold(fingerprint: string, hold: AlertHold | null): void {
    this.#sql.setHold.run(hold?.until ?? null, hold?.reason ?? null, fingerprint);
  }

  /** Forgets a pending alert that never fired. */
  drop(fingerprint: string): void {
    this.#sql.drop.run(fingerprint);
  }

  /**
   * Writes one event; the function returned gives it with its row id. On PostgreSQL, inside a
   * transaction, the insert is held back with the transaction's other writes and that call sends
   * what is held if it was not yet: a cycle that writes 10,000 events waits for some 40 round trips
   * to the database, not 10,000. Call it once the cycle's writes are made.
   */
  insertEvent(event: Omit<AlertEvent, 'id'>, at: number): () => AlertEvent {
    const written = this.#sql.insertEvent.run(event.fingerprint, event.kind, at, JSON.stringify(event));
    return () => ({ id: Number(written.lastInsertRowid), ...event });
  }

  /**
   * The worst severity a firing alert was announced at in its current life (its firing and
   * escalations); undefined when none is stored (pruned by retention).
   */
  toldSeverity(alert: AlertRow): Severity | undefined {
    if (alert.firedAt === null) return undefined;
    let worst: Severity | undefined;
    for (const { payload } of this.#sql.selectTold.all(alert.fingerprint, alert.firedAt)) {
      const { severity } = JSON.parse(payload) as Pick<AlertEvent, 'severity'>;
      if (worst === undefined || SEVERITY_RANK[severity] > SEVERITY_RANK[worst]) worst = severity;
    }
    return worst;
  }

  /** The events of the given kinds written after `since`, oldest first (the digest's day). */
  eventsSince(since: number, kinds: readonly AlertEventKind[]): AlertEvent[] {
    if (kinds.length === 0) return [];
    return eventsWhere(this.store, `at > ? AND kind IN (${kinds.map(() => '?').join(', ')})`, since, ...kinds);
  }
}

/** One alert's events in its stored history (every life until retention prunes them), oldest first. */
export function eventsOfAlert(store: Store | AlertStore, fingerprint: string): AlertEvent[] {
  return eventsWhere(alertStoreOf(store).store, 'fingerprint = ?', fingerprint);
}

/** The events `where` takes, oldest first, each with its row id; read when asked, so prepared on the spot. */
function eventsWhere(store: Store, where: string, ...params: unknown[]): AlertEvent[] {
  const rows = store.db
    .prepare<unknown[], { id: number; payload: string }>(`SELECT id, payload FROM events WHERE ${where} ORDER BY id`)
    .all(...params);
  return rows.map((r) => ({ id: r.id, ...(JSON.parse(r.payload) as Omit<AlertEvent, 'id'>) }));
}

/** Builds the event of `kind` from an alert's state at that moment. */
export function eventOf(
  row: AlertRow,
  kind: AlertEventKind,
  at: number,
  reason: string,
  resolution: string | null = null,
): Omit<AlertEvent, 'id'> {
  return {
    kind,
    fingerprint: row.fingerprint,
    check: row.check,
    severity: row.severity,
    summary: row.summary,
    details: shownDetails(row.details),
    labels: row.labels,
    url: row.url,
    startsAt: new Date(row.firedAt ?? row.firstSeenAt).toISOString(),
    endsAt: kind === 'resolved' ? new Date(row.resolvedAt ?? at).toISOString() : null,
    at: new Date(at).toISOString(),
    reason,
    job: row.job,
    ...(row.subject ? { subject: row.subject } : {}),
    since: row.since,
    ...(row.facts ? { facts: row.facts } : {}),
    ...(row.brief !== null ? { brief: row.brief } : {}),
    ...(resolution !== null ? { resolution } : {}),
  };
}

/** The given AlertStore, or a fresh one over the Store (statements prepared on the spot). */
export function alertStoreOf(store: Store | AlertStore): AlertStore {
  return store instanceof AlertStore ? store : new AlertStore(store);
}

/** An acknowledgement as an event carries it (its time as ISO 8601). */
export function acknowledgementNote(ack: Acknowledgement): AcknowledgementNote {
  return {
    by: ack.by,
    via: ack.via,
    at: new Date(ack.at).toISOString(),
    ...(ack.comment !== null ? { comment: ack.comment } : {}),
  };
}

/** Maps a raw row in {@link READ_COLUMNS} order. */
function fromRow(v: unknown[]): AlertRow {
  const subject = v[10] as string | null;
  const facts = v[11] as string | null;
  const acknowledgedAt = v[21] as number | null;
  const until = (v[19] ?? null) as number | null;
  const reason = (v[20] ?? null) as string | null;
  return {
    fingerprint: v[0] as string,
    job: v[1] as string,
    check: v[2] as CheckName,
    status: v[3] as AlertStatus,
    severity: v[4] as Severity,
    summary: v[5] as string,
    details: JSON.parse(v[6] as string) as Record<string, string>,
    labels: JSON.parse(v[7] as string) as Labels<CheckName>,
    url: v[8] as string | null,
    since: v[9] as string | null,
    subject: subject === null ? null : (JSON.parse(subject) as Subject),
    facts: facts === null ? null : (JSON.parse(facts) as Fact[]),
    brief: v[12] as string | null,
    firstSeenAt: v[13] as number,
    lastSeenAt: v[14] as number,
    seenCount: v[15] as number,
    firedAt: v[16] as number | null,
    lastNotifiedAt: v[17] as number | null,
    resolvedAt: v[18] as number | null,
    acknowledgement:
      acknowledgedAt === null
        ? null
        : {
            at: acknowledgedAt,
            by: v[22] as string,
            via: v[23] as AcknowledgeSurface,
            comment: v[24] as string | null,
          },
    // The stored hold: an end time, a reason, or both; neither is no hold.
    hold: until === null && reason === null ? null : { until, reason },
  };
}

const STATUS_ORDER: Record<AlertStatus, number> = { firing: 0, pending: 1, resolved: 2 };

function byImportance(a: AlertRow, b: AlertRow): number {
  return (
    STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    a.firstSeenAt - b.firstSeenAt ||
    a.fingerprint.localeCompare(b.fingerprint)
  );
}

/**
 * An alert row as both write statements store it, by field: its JSON columns as text, its check
 * under its column's name, its hold in two columns. One encoding, so a new life and an update
 * can't drift apart.
 */
function stored(row: AlertRow) {
  return {
    ...row,
    checkName: row.check,
    details: JSON.stringify(row.details),
    labels: JSON.stringify(row.labels),
    subject: row.subject ? JSON.stringify(row.subject) : null,
    facts: row.facts ? JSON.stringify(row.facts) : null,
    holdUntil: row.hold?.until ?? null,
    holdReason: row.hold?.reason ?? null,
  };
}

/** What the write statements bind, by `@field` ({@link stored}). */
type StoredAlert = ReturnType<typeof stored>;

/** An open alert's check, subject and details, as the collectors are handed them. */
export type OpenSubjectRow = Pick<AlertRow, 'check' | 'details'> & { subject: Subject };

function openSubjectOf(r: SubjectRow): OpenSubjectRow {
  return {
    check: r.check as CheckName,
    subject: JSON.parse(r.subject) as Subject,
    details: JSON.parse(r.details) as Record<string, string>,
  };
}
