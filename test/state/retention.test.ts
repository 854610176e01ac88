import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { pruneState } from '../../src/state/retention.js';
import type { Store } from '../../src/state/store.js';
import type { Migration } from '../../src/state/migration.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1);

/** Stand-ins for the later migrations, with the column names their owners use. */
const laterTables: Migration = {
  version: 50,
  name: 'test-tables',
  up: `
    CREATE TABLE alerts (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, status TEXT NOT NULL, resolved_at BIGINT);
    CREATE TABLE events (id INTEGER PRIMARY KEY, alert_id INTEGER NOT NULL REFERENCES alerts(id), fingerprint TEXT NOT NULL, kind TEXT NOT NULL, at BIGINT NOT NULL);
    CREATE TABLE outbox (id INTEGER PRIMARY KEY, event_id INTEGER REFERENCES events(id), status TEXT NOT NULL, created_at BIGINT NOT NULL);
    CREATE TABLE remediation_audit (id INTEGER PRIMARY KEY, at BIGINT NOT NULL);
    CREATE TABLE silences (id INTEGER PRIMARY KEY, ends_at BIGINT NOT NULL, expired_at BIGINT);
  `,
};

/** The first migration: `meta` and `source_health` alone. */
const coreOf = () => ALL_MIGRATIONS[0]!;

let state: TestState;
let store: Store;

describe.each(STATE_BACKENDS)('pruneState on $name', (backend) => {
  beforeEach(() => {
    state = backend.fresh();
  });
  afterEach(() => state.cleanup());

  it('skips tables that do not exist yet', () => {
    store = state.open({ migrations: [coreOf()] });
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(result.deleted).toEqual({});
    expect(result.skipped).toEqual({
      alerts: 'table does not exist',
      events: 'table does not exist',
      outbox: 'table does not exist',
      outbox_bodies: 'table does not exist',
      notification_log: 'table does not exist',
      notify_digest_log: 'table does not exist',
      alert_context: 'table does not exist',
      slack_app_message_alerts: 'table does not exist',
      slack_app_messages: 'table does not exist',
      slack_interactions: 'table does not exist',
      time_to_alert: 'table does not exist',
      silences: 'table does not exist',
      remediation_audit: 'table does not exist',
      remediation_attempts: 'table does not exist',
      remediation_skip_state: 'table does not exist',
      unrouted_events: 'table does not exist',
    });
  });

  it('finds every column its rules read in the real schema', () => {
    store = state.open();
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    for (const reason of Object.values(result.skipped)) expect(reason).toBe('table does not exist');
    expect(Object.values(result.deleted).every((n) => n === 0)).toBe(true);
  });

  it('drops a notification body once no outbox row names it, and keeps one still named or recent', () => {
    store = state.open();
    const old = NOW - 40 * DAY;
    const recent = NOW - 2 * DAY;
    store.db.exec(`
      INSERT INTO outbox_bodies (body_id, body, stored_at) VALUES (1, '{}', ${old}), (2, '{}', ${old}), (3, '{}', ${old}), (4, '{}', ${recent});
      INSERT INTO outbox (channel, route, source, kind, payload, body_id, group_key, status, decision, created_at, updated_at)
      VALUES ('a', 'r', 'event', 'firing', '', 1, '', 'sent', 'deliver', ${old}, ${old}),
             ('b', 'r', 'event', 'firing', '', 1, '', 'sent', 'deliver', ${old}, ${old}),
             ('a', 'r', 'event', 'firing', '', 2, '', 'sent', 'deliver', ${old}, ${old}),
             ('b', 'r', 'event', 'firing', '', 2, '', 'held', 'muted_window', ${old}, ${old});
    `);
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    // Body 1's rows are finished and old: they go, then it. Body 2 is still named by a held row.
    expect(result.deleted).toMatchObject({ outbox: 3, outbox_bodies: 2 });
    const left = store.db.prepare('SELECT body_id FROM outbox_bodies ORDER BY body_id').all();
    expect(left.map((r) => Number((r as { body_id: number }).body_id))).toEqual([2, 4]);
  });

  it('deletes only finished rows older than the retention, children first', () => {
    store = state.open({ migrations: [coreOf(), laterTables] });
    const old = NOW - 40 * DAY;
    const recent = NOW - 2 * DAY;
    const db = store.db;
    db.exec(`
      INSERT INTO alerts VALUES (1, 'a', 'resolved', ${old}), (2, 'b', 'resolved', ${recent}), (3, 'c', 'firing', NULL);
      INSERT INTO events VALUES (10, 1, 'a', 'firing', ${old}), (11, 2, 'b', 'firing', ${recent}),
        (12, 3, 'c', 'firing', ${old}), (13, 3, 'c', 'acknowledged', ${old});
      INSERT INTO outbox VALUES (20, 10, 'sent', ${old}), (21, 11, 'sent', ${recent}), (22, NULL, 'pending', ${old}), (23, NULL, 'expired', ${old}), (24, NULL, 'held', ${old}), (25, NULL, 'suppressed', ${old});
      INSERT INTO remediation_audit VALUES (30, ${old}), (31, ${recent});
      INSERT INTO silences VALUES (40, ${old}, NULL), (41, ${NOW + DAY}, ${old}), (42, ${NOW + DAY}, NULL), (43, ${recent}, NULL);
    `);
    // Events go by age, but for the firing alert's latest news (12); the alert row itself stays.
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(result.deleted).toEqual({ outbox: 3, events: 2, alerts: 1, silences: 2, remediation_audit: 1 });
    expect(result.skipped).toEqual({
      outbox_bodies: 'table does not exist',
      notification_log: 'table does not exist',
      notify_digest_log: 'table does not exist',
      alert_context: 'table does not exist',
      slack_app_message_alerts: 'table does not exist',
      slack_app_messages: 'table does not exist',
      slack_interactions: 'table does not exist',
      time_to_alert: 'table does not exist',
      remediation_attempts: 'table does not exist',
      remediation_skip_state: 'table does not exist',
      unrouted_events: 'table does not exist',
    });
    const ids = (table: string) =>
      db
        .prepare(`SELECT id FROM ${table} ORDER BY id`)
        .all()
        .map((r) => (r as { id: number }).id);
    expect(ids('alerts')).toEqual([2, 3]);
    expect(ids('events')).toEqual([11, 12]);
    expect(ids('outbox')).toEqual([21, 22, 24]);
    expect(ids('remediation_audit')).toEqual([31]);
    expect(ids('silences')).toEqual([42, 43]);
  });

  it('skips a table whose columns differ instead of failing the whole prune', () => {
    const odd: Migration = {
      version: 50,
      name: 'odd',
      up: 'CREATE TABLE events (id INTEGER PRIMARY KEY, happened INTEGER)',
    };
    store = state.open({ migrations: [coreOf(), odd] });
    const result = pruneState(store, { now: NOW, retentionMs: DAY });
    expect(result.skipped.events).toBe('missing column(s) at, fingerprint, kind');
  });

  it('drops the Slack living messages untouched for the whole retention, with what they showed (real schema)', () => {
    store = state.open();
    const old = NOW - 40 * DAY;
    const recent = NOW - 2 * DAY;
    const message = store.db.prepare(
      `INSERT INTO slack_app_messages (id, channel, group_key, status, token, slack_channel, ts, created_at, updated_at, closed_at)
       VALUES (?, 'ops-app', ?, ?, ?, 'C1', ?, ?, ?, ?)`,
    );
    // Closed long ago; open and untouched as long (its alerts ended unseen); closed lately; open and updated lately.
    message.run(1, 'a', 'closed', 't1', '1.1', old, old, old);
    message.run(2, 'b', 'open', 't2', '1.2', old, old, null);
    message.run(3, 'c', 'closed', 't3', '1.3', old, recent, recent);
    message.run(4, 'd', 'open', 't4', '1.4', old, recent, null);
    const shown = store.db.prepare(
      `INSERT INTO slack_app_message_alerts (message_id, fingerprint, event) VALUES (?, 'failed_runs/x', '{}')`,
    );
    for (const id of [1, 2, 3, 4]) shown.run(id);
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(result.deleted).toMatchObject({ slack_app_message_alerts: 2, slack_app_messages: 2 });
    expect(store.db.prepare('SELECT id FROM slack_app_messages ORDER BY id').all()).toEqual([{ id: 3 }, { id: 4 }]);
    expect(store.db.prepare('SELECT message_id FROM slack_app_message_alerts ORDER BY 1').all()).toEqual([
      { message_id: 3 },
      { message_id: 4 },
    ]);
  });

  it('keeps the latest news of an alert open longer than the retention, which its escalation names (real schema)', () => {
    store = state.open();
    const alert = store.db.prepare(
      `INSERT INTO alerts (fingerprint, job, check_name, status, severity, summary, details, labels, first_seen_at, last_seen_at, seen_count)
       VALUES (?, 'urls', 'certificates', ?, 'critical', 's', '{}', '{}', 0, 0, 1)`,
    );
    alert.run('open', 'firing');
    alert.run('over', 'resolved');
    const event = store.db.prepare(`INSERT INTO events (id, fingerprint, kind, at, payload) VALUES (?, ?, ?, ?, '{}')`);
    // Open for 400 days, acknowledged (so no repeat since): its firing and first repeat are old news.
    event.run(1, 'open', 'firing', NOW - 400 * DAY);
    event.run(2, 'open', 'repeat', NOW - 399 * DAY);
    event.run(3, 'open', 'acknowledged', NOW - 399 * DAY);
    event.run(4, 'over', 'firing', NOW - 400 * DAY);
    event.run(5, 'over', 'resolved', NOW - 40 * DAY);
    pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(store.db.prepare('SELECT id FROM events ORDER BY id').all()).toEqual([{ id: 2 }]);
  });

  it('drops the audit of Slack clicks older than the retention (real schema)', () => {
    store = state.open();
    const click = store.db.prepare(
      `INSERT INTO slack_interactions (id, at, channel, slack_user, action, outcome, detail)
       VALUES (?, ?, 'ops-app', 'U0ALICE', 'acknowledge', 'done', 'Acknowledged')`,
    );
    click.run(1, NOW - 40 * DAY);
    click.run(2, NOW - 2 * DAY);
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(result.deleted).toMatchObject({ slack_interactions: 1 });
    expect(store.db.prepare('SELECT id FROM slack_interactions').all()).toEqual([{ id: 2 }]);
  });

  describe('remediation attempts and skip state (real schema)', () => {
    const old = NOW - 40 * DAY;
    const recent = NOW - 2 * DAY;
    let seq = 0;

    /** One attempt of (policy, run `record`), with its alert `fp`. */
    function attempt(
      record: number,
      n: number,
      status: 'planned' | 'following' | 'finished',
      at: number,
      fp = `failed_runs/run/${record}`,
    ): void {
      seq++;
      store.db
        .prepare(
          `INSERT INTO remediation_attempts (policy, action, record_type, record_id, attempt, idempotency_key, body, fingerprint,
             labels, severity, summary, life, status, planned_at, finished_at)
           VALUES ('p', 'runs.retry', 'run', ?, ?, ?, '{}', ?, '{}', 'warning', 's', 1, ?, ?, ?)`,
        )
        .run(record, n, `dw-p-run${record}-a${n}-${seq}`, fp, status, at, status === 'finished' ? at : null);
    }
    function alert(fp: string, status: 'firing' | 'resolved', resolvedAt: number | null): void {
      store.db
        .prepare(
          `INSERT INTO alerts (fingerprint, job, check_name, status, severity, summary, details, labels, first_seen_at, last_seen_at, seen_count, resolved_at)
           VALUES (?, 'runs', 'failed_runs', ?, 'warning', 's', '{}', '{}', 0, 0, 1, ?)`,
        )
        .run(fp, status, resolvedAt);
    }
    const remaining = () =>
      (
        store.db
          .prepare('SELECT record_id AS r, attempt AS n FROM remediation_attempts ORDER BY record_id, attempt')
          .all() as { r: number; n: number }[]
      ).map((x) => `${x.r}/${x.n}`);

    it.each<[string, () => void, string[]]>([
      [
        'a sequence finished long ago, its alert resolved',
        () => (attempt(1, 1, 'finished', old), attempt(1, 2, 'finished', old)),
        [],
      ],
      ['a sequence with no alert row left', () => attempt(1, 1, 'finished', old, 'gone/1'), []],
      ['an attempt still planned, however old', () => attempt(1, 1, 'planned', old), ['1/1']],
      ['an attempt still followed, however old', () => attempt(1, 1, 'following', old), ['1/1']],
      [
        'an old finished attempt whose sequence goes on',
        () => (attempt(1, 1, 'finished', old), attempt(1, 2, 'following', recent)),
        ['1/1', '1/2'],
      ],
      [
        'an old finished attempt whose sequence finished recently',
        () => (attempt(1, 1, 'finished', old), attempt(1, 2, 'finished', recent)),
        ['1/1', '1/2'],
      ],
      [
        'an old finished sequence whose alert still fires',
        () => (alert('failed_runs/run/1', 'firing', null), attempt(1, 1, 'finished', old)),
        ['1/1'],
      ],
    ])('remediation_attempts: %s', (_what, setUp, kept) => {
      store = state.open();
      alert('failed_runs/run/9', 'resolved', recent);
      setUp();
      const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
      expect(remaining()).toEqual(kept);
      expect(result.skipped).not.toHaveProperty('remediation_attempts');
    });

    it.each<[string, string, 'firing' | 'resolved' | null, number, boolean]>([
      ['read long ago, its alert resolved', 'ready', 'resolved', old, false],
      ['read long ago, no alert row left', 'ready', null, old, false],
      ['asked long ago, never read, its alert resolved', 'pending', 'resolved', old, false],
      ['read long ago, its alert still firing (its repeats show it)', 'ready', 'firing', old, true],
      ['read recently, its alert resolved', 'ready', 'resolved', recent, true],
    ])('alert_context: %s', (_what, status, alertStatus, at, kept) => {
      store = state.open();
      if (alertStatus) alert('failed_runs/run/1', alertStatus, alertStatus === 'resolved' ? old : null);
      store.db
        .prepare(
          `INSERT INTO alert_context (subject, fingerprint, ask, status, requested_at, updated_at)
           VALUES ('run/1', 'failed_runs/run/1', '{}', ?, ?, ?)`,
        )
        .run(status, at, at);
      const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
      expect(result.deleted.alert_context).toBe(kept ? 0 : 1);
    });

    it.each<[string, number, boolean]>([
      ['its event pruned (old): the row goes', old, false],
      ['its event kept (recent): the row stays for the next delivery round', recent, true],
    ])('unrouted_events: %s', (_what, at, kept) => {
      store = state.open();
      const { id } = store.db
        .prepare<[number], { id: number }>(
          `INSERT INTO events (fingerprint, kind, at, payload) VALUES ('a', 'acknowledged', ?, '{}') RETURNING id`,
        )
        .get(at)!;
      store.db.prepare('INSERT INTO unrouted_events (event_id, queued_at) VALUES (?, ?)').run(id, at);
      const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
      expect(result.deleted.unrouted_events).toBe(kept ? 0 : 1);
    });

    it('remediation_skip_state: reasons not written again within the retention go', () => {
      store = state.open();
      const skip = store.db.prepare(
        `INSERT INTO remediation_skip_state (policy, record_type, record_id, life, reason, at) VALUES ('p', 'run', ?, 1, 'dry run', ?)`,
      );
      skip.run(1, old);
      skip.run(2, recent);
      const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
      expect(result.deleted.remediation_skip_state).toBe(1);
      expect(store.db.prepare('SELECT record_id FROM remediation_skip_state').all()).toEqual([{ record_id: 2 }]);
    });

    it('skips the attempts rule, naming what is missing, when the alerts table lacks a column it reads', () => {
      const odd: Migration = {
        version: 50,
        name: 'odd',
        up: `CREATE TABLE alerts (id INTEGER PRIMARY KEY, status TEXT);
             CREATE TABLE remediation_attempts (policy TEXT, record_type TEXT, record_id INTEGER, fingerprint TEXT, status TEXT, planned_at INTEGER, finished_at INTEGER)`,
      };
      store = state.open({ migrations: [coreOf(), odd] });
      expect(pruneState(store, { now: NOW, retentionMs: DAY }).skipped.remediation_attempts).toBe(
        'missing column(s) alerts.fingerprint',
      );
    });
  });
});
