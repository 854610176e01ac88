import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import core from '../../src/state/migrations/001-core.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { pruneState } from '../../src/state/retention.js';
import { Store, type Migration } from '../../src/state/store.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1);

/** Stand-ins for the later migrations, with the column names their owners use. */
const laterTables: Migration = {
  version: 50,
  name: 'test-tables',
  up: `
    CREATE TABLE alerts (id INTEGER PRIMARY KEY, status TEXT NOT NULL, resolved_at INTEGER);
    CREATE TABLE events (id INTEGER PRIMARY KEY, alert_id INTEGER NOT NULL REFERENCES alerts(id), at INTEGER NOT NULL);
    CREATE TABLE outbox (id INTEGER PRIMARY KEY, event_id INTEGER REFERENCES events(id), status TEXT NOT NULL, created_at INTEGER NOT NULL);
    CREATE TABLE remediation_audit (id INTEGER PRIMARY KEY, at INTEGER NOT NULL);
    CREATE TABLE silences (id INTEGER PRIMARY KEY, ends_at INTEGER NOT NULL, expired_at INTEGER);
  `,
};

let dir: string;
let store: Store;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-retention-'));
});
afterEach(() => {
  store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('pruneState', () => {
  it('skips tables that do not exist yet', () => {
    store = Store.open(path.join(dir, 'state.db'), { migrations: [core] });
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(result.deleted).toEqual({});
    expect(result.skipped).toEqual({
      alerts: 'table does not exist',
      events: 'table does not exist',
      outbox: 'table does not exist',
      notification_log: 'table does not exist',
      notify_digest_log: 'table does not exist',
      silences: 'table does not exist',
      remediation_audit: 'table does not exist',
    });
  });

  it('finds every column its rules read in the real schema', () => {
    store = Store.open(path.join(dir, 'state.db'));
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    for (const reason of Object.values(result.skipped)) expect(reason).toBe('table does not exist');
    expect(Object.values(result.deleted).every((n) => n === 0)).toBe(true);
  });

  it('deletes only finished rows older than the retention, children first', () => {
    store = Store.open(path.join(dir, 'state.db'), { migrations: [core, laterTables] });
    const old = NOW - 40 * DAY;
    const recent = NOW - 2 * DAY;
    const db = store.db;
    db.exec(`
      INSERT INTO alerts VALUES (1, 'resolved', ${old}), (2, 'resolved', ${recent}), (3, 'firing', NULL);
      INSERT INTO events VALUES (10, 1, ${old}), (11, 2, ${recent}), (12, 3, ${old});
      INSERT INTO outbox VALUES (20, 10, 'sent', ${old}), (21, 11, 'sent', ${recent}), (22, NULL, 'pending', ${old}), (23, NULL, 'expired', ${old}), (24, NULL, 'held', ${old}), (25, NULL, 'suppressed', ${old});
      INSERT INTO remediation_audit VALUES (30, ${old}), (31, ${recent});
      INSERT INTO silences VALUES (40, ${old}, NULL), (41, ${NOW + DAY}, ${old}), (42, ${NOW + DAY}, NULL), (43, ${recent}, NULL);
    `);
    // Events go by age alone (event 12 of the firing alert too); the alert row itself stays.
    const result = pruneState(store, { now: NOW, retentionMs: 30 * DAY });
    expect(result.deleted).toEqual({ outbox: 3, events: 2, alerts: 1, silences: 2, remediation_audit: 1 });
    expect(result.skipped).toEqual({ notification_log: 'table does not exist', notify_digest_log: 'table does not exist' });
    const ids = (table: string) => db.prepare(`SELECT id FROM ${table} ORDER BY id`).all().map((r) => (r as { id: number }).id);
    expect(ids('alerts')).toEqual([2, 3]);
    expect(ids('events')).toEqual([11]);
    expect(ids('outbox')).toEqual([21, 22, 24]);
    expect(ids('remediation_audit')).toEqual([31]);
    expect(ids('silences')).toEqual([42, 43]);
  });

  it('skips a table whose columns differ instead of failing the whole prune', () => {
    const odd: Migration = { version: 50, name: 'odd', up: 'CREATE TABLE events (id INTEGER PRIMARY KEY, happened INTEGER)' };
    store = Store.open(path.join(dir, 'state.db'), { migrations: [core, odd] });
    const result = pruneState(store, { now: NOW, retentionMs: DAY });
    expect(result.skipped.events).toBe('missing column(s) at');
  });
});
