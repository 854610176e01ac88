/**
 * The remediation tables' SQL (migration 004), prepared once per open {@link Store}. Row ⇄ object
 * mapping lives here and nowhere else. Every write runs inside a transaction the caller holds.
 */
import type { AlertRow } from '../alerts/alert-store.js';
import type { Labels } from '../lib/alert-vocabulary.js';
import type { Store } from '../state/store.js';
import { camelRow, snakeColumn } from '../state/camel-row.js';
import { prepareAll, sql, type Prepared } from '../state/prepare-all.js';
import type { ActionTarget, RecordType } from './actions/action.js';
import { INSTALLATION_ID } from './idempotency-key.js';
import type { RecordHistory } from './policy.js';
import type { Suspension, SuspensionScope } from './suspension.js';

/** Where an attempt is. */
export type AttemptStatus = 'planned' | 'following' | 'finished';

/** A new attempt, as planned: what the planner writes, and nothing after it changes. */
export interface NewAttempt extends ActionTarget, Pick<AlertRow, 'fingerprint' | 'severity' | 'summary' | 'url'> {
  policy: string;
  action: string;
  attempt: number;
  key: string;
  body: Record<string, unknown>;
  labels: Labels;
  life: number;
  plannedAt: number;
}

/** Where an attempt stands after its sends, answers and polls: what {@link AttemptUpdate} changes. */
export interface AttemptProgress {
  status: AttemptStatus;
  counted: boolean;
  firstSentAt: number | null;
  lastSentAt: number | null;
  sendCount: number;
  /** planned: when to send (again); following: when to poll; finished: earliest next attempt. */
  nextAt: number | null;
  answer: string | null;
  runId: number | null;
  followUntil: number | null;
  outcome: string | null;
  outcomeDetail: string | null;
  finishedAt: number | null;
  /** The backup the change's answer named (`backup_id`), for reading it back; null: none named. */
  backupId: number | null;
  /** Reading the backup back (its run succeeded) until then; null: not reading back. */
  readbackUntil: number | null;
}

/** One row of `remediation_attempts`. */
export interface AttemptRow extends NewAttempt, AttemptProgress {
  id: number;
}

/** What the audit says one decision, answer or outcome was. */
export type AuditDecision =
  /** A change was decided and its attempt (key) recorded, before sending. */
  | 'acted'
  /** Not acted on; `reason` says why. */
  | 'skipped'
  /** Would have acted; nothing was sent. */
  | 'dry_run'
  /** The service's answer to a request. */
  | 'answered'
  /** How the attempt ended. */
  | 'outcome'
  /** The policy was suspended, or its suspension cleared. */
  | 'suspended'
  | 'resumed';

/** One row of `remediation_audit`. */
export interface AuditRow {
  id: number;
  at: number;
  policy: string;
  action: string;
  recordType: string | null;
  recordId: number | null;
  fingerprint: string | null;
  /** The environment of the app the row is about, from the alert's labels; null: outside any, or no record. */
  environment: string | null;
  decision: AuditDecision;
  reason: string;
  key: string | null;
  answer: string | null;
  outcome: string | null;
  runId: number | null;
  detail: string | null;
}

/** The columns of an audit row that may be left out (null): all but its time, policy, action and decision. */
const AUDIT_NULLS = Object.fromEntries(
  'recordType recordId fingerprint environment key answer outcome runId detail'.split(' ').map((c) => [c, null]),
);

/** Changes to an attempt after an answer or a poll (fields left out stay). */
export type AttemptUpdate = Partial<AttemptProgress>;

/**
 * Refusals that say "never, for this record" (`change-answer.ts`), stored as the outcome of the
 * attempt: they stop a policy on a record for the rest of the alert's life.
 */
export const STOP_OUTCOMES = ['not_retryable', 'not_found'] as const;

/**
 * `remediation_suspensions.environment` (migration 005): `*` for a whole policy, `none` for apps
 * outside any environment (never an environment type the reference states), else the type.
 */
const WHOLE_POLICY = '*';
const NO_ENVIRONMENT = 'none';

/** The `meta` row counting the keys given out (see {@link RemediationStore.takeKeyNumber}). */
const KEY_NUMBER = 'remediation_key_number';

/** A row as the store reads it before mapping it (`attemptOf`, `suspensionOf`). */
type Row = Record<string, unknown>;
/** Which record of which policy a statement is about: policy (or action), record type, record id. */
type RecordKey = [string, RecordType, number];

/** The SQL of the remediation tables, prepared once per store ({@link RemediationStore}). */
const SQL = {
  insertAttempt: sql<
    Omit<NewAttempt, 'body' | 'labels'> & { body: string; labels: string },
    Row
  >(`INSERT INTO remediation_attempts (policy, action, record_type, record_id, attempt, idempotency_key, body,
       fingerprint, labels, severity, summary, url, life, status, planned_at, next_at)
     VALUES (@policy, @action, @recordType, @recordId, @attempt, @key, @body,
       @fingerprint, @labels, @severity, @summary, @url, @life, 'planned', @plannedAt, @plannedAt)
     RETURNING *`),
  counted: sql<RecordKey, { n: number }>(`SELECT COALESCE(SUM(counted), 0) AS n
     FROM remediation_attempts WHERE policy = ? AND record_type = ? AND record_id = ?`),
  // Any policy's open attempts on the same record and action (two policies matching one alert
  // must not both change it), and its backoff, whichever policy's attempt on it ended last.
  onRecord: sql<RecordKey, { n: number; t: number | null }>(`SELECT
       COUNT(CASE WHEN status <> 'finished' THEN 1 END) AS n, MAX(CASE WHEN status = 'finished' THEN next_at END) AS t
     FROM remediation_attempts WHERE action = ? AND record_type = ? AND record_id = ?`),
  nextDue: sql<[], { t: number | null }>(
    `SELECT MIN(COALESCE(next_at, 0)) AS t FROM remediation_attempts WHERE status <> 'finished'`,
  ),
  latest: sql<RecordKey, Row>(`SELECT * FROM remediation_attempts WHERE policy = ? AND record_type = ? AND record_id = ?
     ORDER BY attempt DESC LIMIT 1`),
  due: sql<[number, number], Row>(
    `SELECT * FROM remediation_attempts WHERE status <> 'finished' AND (next_at IS NULL OR next_at <= ? OR next_at > ?) ORDER BY id`,
  ),
  one: sql<[number], Row>('SELECT * FROM remediation_attempts WHERE id = ?'),
  recentActions: sql<[number, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM remediation_attempts WHERE planned_at > ? AND planned_at <= ?',
  ),
  insertAudit: sql<
    Omit<AuditRow, 'id'>
  >(`INSERT INTO remediation_audit (at, policy, action, record_type, record_id, fingerprint, environment, decision, reason,
       idempotency_key, answer, outcome, run_id, detail)
     VALUES (@at, @policy, @action, @recordType, @recordId, @fingerprint, @environment, @decision, @reason,
       @key, @answer, @outcome, @runId, @detail)`),
  skipState: sql<RecordKey, { life: number; reason: string }>(
    'SELECT life, reason FROM remediation_skip_state WHERE policy = ? AND record_type = ? AND record_id = ?',
  ),
  setSkipState: sql<
    [...RecordKey, number, string, number]
  >(`INSERT INTO remediation_skip_state (policy, record_type, record_id, life, reason, at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (policy, record_type, record_id) DO UPDATE SET life = excluded.life, reason = excluded.reason, at = excluded.at`),
  clearSkipState: sql<RecordKey>(
    'DELETE FROM remediation_skip_state WHERE policy = ? AND record_type = ? AND record_id = ?',
  ),
  suspensions: sql<[], Row>('SELECT * FROM remediation_suspensions ORDER BY policy, environment'),
  suspend: sql<
    [string, string | null, string, string, string, number]
  >(`INSERT INTO remediation_suspensions (policy, environment, action, code, message, at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (policy, environment) DO NOTHING`),
  clearSuspensions: sql<[]>('DELETE FROM remediation_suspensions'),
  installation: sql<[], { value: string }>(`SELECT value FROM meta WHERE key = 'installation_id'`),
  keyNumber: sql<[], { n: number }>(`SELECT CAST(value AS INTEGER) AS n FROM meta WHERE key = '${KEY_NUMBER}'`),
  takeKeyNumber: sql<[], { n: number }>(`INSERT INTO meta (key, value) VALUES ('${KEY_NUMBER}', '1')
     ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)
     RETURNING CAST(meta.value AS INTEGER) AS n`),
};

/** The prepared statements of the remediation tables. */
export class RemediationStore {
  readonly #sql: Prepared<typeof SQL>;

  constructor(readonly store: Store) {
    this.#sql = prepareAll(store.db, SQL);
  }

  /**
   * This state file's installation id (`meta.installation_id`, drawn by migration 005), which
   * every idempotency key carries. Throws when it is missing or not what migration 005 writes.
   */
  installation(): string {
    const row = this.#sql.installation.get();
    if (!row)
      throw new Error(
        `state file ${this.store.path} has no installation id (meta.installation_id, written by state migration 5)`,
      );
    if (!INSTALLATION_ID.test(row.value)) {
      throw new Error(
        `state file ${this.store.path}: meta.installation_id ${JSON.stringify(row.value)} is not 8-16 lowercase letters or digits`,
      );
    }
    return row.value;
  }

  /**
   * Gives out the next key number (1, 2, ...) inside the caller's transaction: a rollback gives it
   * back, a commit keeps it given. Never the same number twice in one state file, whatever
   * retention deletes.
   */
  takeKeyNumber(): number {
    return this.#sql.takeKeyNumber.get()!.n;
  }

  /** The number {@link takeKeyNumber} would give out now, without taking it (a dry run's key). */
  peekKeyNumber(): number {
    return (this.#sql.keyNumber.get()?.n ?? 0) + 1;
  }

  /** Records a planned attempt (its key) and returns it. */
  insertAttempt(a: NewAttempt): AttemptRow {
    const row = this.#sql.insertAttempt.get({
      ...a,
      body: JSON.stringify(a.body),
      labels: JSON.stringify(a.labels),
    })!;
    return attemptOf(row);
  }

  /** One attempt by row id. */
  attempt(id: number): AttemptRow | undefined {
    const row = this.#sql.one.get(id);
    return row ? attemptOf(row) : undefined;
  }

  /** Applies an update to an attempt. */
  updateAttempt(id: number, update: AttemptUpdate): void {
    const entries = Object.entries(update).filter(([, v]) => v !== undefined) as [keyof AttemptUpdate, unknown][];
    if (entries.length === 0) return;
    const sets = entries.map(([k]) => `${snakeColumn(k)} = ?`).join(', ');
    const values = entries.map(([k, v]) => (k === 'counted' ? (v ? 1 : 0) : v));
    this.store.db.prepare(`UPDATE remediation_attempts SET ${sets} WHERE id = ?`).run(...values, id);
  }

  /**
   * Attempts to send or poll now: planned or followed, due at `now`, or set for after `latest`, the
   * latest time a wait set by now can end (the clock went back since: `clockWentBack`).
   */
  due(now: number, latest: number): AttemptRow[] {
    return this.#sql.due.all(now, latest).map(attemptOf);
  }

  /** When the next planned or followed attempt is due; null when none. */
  nextDue(): number | null {
    return this.#sql.nextDue.get()!.t;
  }

  /** What a policy did on a record so far (and whether any policy is acting on it), for the decision. */
  history(policy: string, action: string, { recordType, recordId }: ActionTarget, life: number): RecordHistory {
    const { n: open, t } = this.#sql.onRecord.get(action, recordType, recordId)!;
    const latestRow = this.#sql.latest.get(policy, recordType, recordId);
    const latest = latestRow ? attemptOf(latestRow) : undefined;
    return {
      lastAttempt: latest?.attempt ?? 0,
      counted: this.#sql.counted.get(policy, recordType, recordId)!.n,
      inFlight: open > 0,
      nextAllowedAt: open > 0 ? null : t,
      stopped: latest?.life === life && (STOP_OUTCOMES as readonly string[]).includes(latest.outcome ?? ''),
    };
  }

  /** Attempts planned after `since` and by `latest` (each sends at least one change request). */
  actionsSince(since: number, latest: number): number {
    return this.#sql.recentActions.get(since, latest)!.n;
  }

  /** Appends one audit row; a column left out is null (a row about no app, no record, no attempt). */
  audit(row: Pick<AuditRow, 'at' | 'policy' | 'action' | 'decision' | 'reason'> & Partial<Omit<AuditRow, 'id'>>): void {
    this.#sql.insertAudit.run({ ...AUDIT_NULLS, ...row } as Omit<AuditRow, 'id'>);
  }

  /** The last skip reason recorded for a record, with the alert life it was recorded in. */
  lastSkip(policy: string, target: ActionTarget): { life: number; reason: string } | undefined {
    return this.#sql.skipState.get(policy, target.recordType, target.recordId);
  }

  /** Remembers the skip reason just recorded. */
  setLastSkip(policy: string, target: ActionTarget, life: number, reason: string, at: number): void {
    this.#sql.setSkipState.run(policy, target.recordType, target.recordId, life, reason, at);
  }

  /** Forgets the last skip reason (after acting, the next skip is news again). */
  clearLastSkip(policy: string, target: ActionTarget): void {
    this.#sql.clearSkipState.run(policy, target.recordType, target.recordId);
  }

  /** Every suspension: whole policies and policies in one environment. */
  suspensions(): Suspension[] {
    return this.#sql.suspensions.all().map(suspensionOf);
  }

  /** Suspends a policy in a scope; true when that scope was not suspended already. */
  suspend(s: Suspension): boolean {
    return this.#sql.suspend.run(s.policy, environmentColumn(s.scope), s.action, s.code, s.message, s.at).changes > 0;
  }

  /** Lifts every suspension and returns the ones lifted. */
  clearSuspensions(): Suspension[] {
    const lifted = this.suspensions();
    this.#sql.clearSuspensions.run();
    return lifted;
  }
}

/** The audit rows written after `since` with one of `decisions`, oldest first (the daily digest's section). */
export function auditSince(store: Store, since: number, decisions: readonly AuditDecision[]): AuditRow[] {
  const rows = store.db
    .prepare(
      `SELECT * FROM remediation_audit WHERE at > ? AND decision IN (${decisions.map(() => '?').join(', ')}) ORDER BY id`,
    )
    .all(since, ...decisions) as Record<string, unknown>[];
  return rows.map(auditOf);
}

/**
 * The audit, oldest first; the newest `limit` rows when given (past the `offset` newest, a page of
 * the console's); only one policy's, or one alert's, when told.
 */
export function listAudit(
  store: Store,
  options: { limit?: number; offset?: number; policy?: string; fingerprint?: string } = {},
): AuditRow[] {
  const { where, params } = filterOf(options);
  const limit = options.limit === undefined ? '' : 'LIMIT @limit';
  const offset = options.offset === undefined || options.limit === undefined ? '' : 'OFFSET @offset';
  const rows = store.db
    .prepare(
      `SELECT * FROM (SELECT * FROM remediation_audit ${where} ORDER BY id DESC ${limit} ${offset}) AS newest ORDER BY id`,
    )
    .all({
      ...params,
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(offset === '' ? {} : { offset: options.offset }),
    }) as Record<string, unknown>[];
  return rows.map(auditOf);
}

/** How many audit rows there are, or one policy's. */
export function countAudit(store: Store, options: { policy?: string } = {}): number {
  const { where, params } = filterOf(options);
  const row = store.db.prepare(`SELECT COUNT(*) AS n FROM remediation_audit ${where}`).get(params);
  return Number((row as { n: number | string }).n);
}

/** The WHERE clause and its parameters of a read by policy and alert (each column named as its option). */
function filterOf(options: { policy?: string; fingerprint?: string }): {
  where: string;
  params: Record<string, string>;
} {
  const params = Object.fromEntries(Object.entries(options).filter(([k, v]) => FILTERS.has(k) && v !== undefined));
  const filters = Object.keys(params).map((column) => `${column} = @${column}`);
  return { where: filters.length === 0 ? '' : `WHERE ${filters.join(' AND ')}`, params };
}

/** The options of an audit or attempts read that filter it. */
const FILTERS: ReadonlySet<string> = new Set(['policy', 'fingerprint']);

/** How many attempts are still planned or followed: work a remediator must carry on, whatever the config says now. */
export function unfinishedAttempts(store: Store): number {
  const row = store.db.prepare(`SELECT COUNT(*) AS n FROM remediation_attempts WHERE status <> 'finished'`).get();
  return (row as { n: number }).n;
}

/** Every attempt, oldest first (tests and tooling), or one alert's (its timeline in the console). */
export function listAttempts(store: Store, options: { fingerprint?: string } = {}): AttemptRow[] {
  const { where, params } = filterOf(options);
  const rows = store.db.prepare(`SELECT * FROM remediation_attempts ${where} ORDER BY id`).all(params);
  return (rows as Record<string, unknown>[]).map(attemptOf);
}

function environmentColumn(scope: SuspensionScope): string {
  if (scope.kind === 'policy') return WHOLE_POLICY;
  return scope.environment ?? NO_ENVIRONMENT;
}

function suspensionOf(r: Record<string, unknown>): Suspension {
  const { environment, ...row } = camelRow<Omit<Suspension, 'scope'> & { environment: string }>(r);
  return {
    ...row,
    scope:
      environment === WHOLE_POLICY
        ? { kind: 'policy' }
        : { kind: 'environment', environment: environment === NO_ENVIRONMENT ? null : environment },
  };
}

/** An audit row as stored. */
function auditOf(r: Record<string, unknown>): AuditRow {
  return camelRow(r, { rename: { idempotency_key: 'key' } });
}

/** An attempt as stored; the readback columns are null in a state before migration 16. */
function attemptOf(r: Record<string, unknown>): AttemptRow {
  const row = camelRow<AttemptRow>(r, { json: ['body', 'labels'], rename: { idempotency_key: 'key' } });
  return { ...row, counted: r.counted === 1, backupId: row.backupId ?? null, readbackUntil: row.readbackUntil ?? null };
}
