/**
 * Migration 009 on a state file written by version 8: the events table is rebuilt to take the
 * acknowledgement kinds with every row and id kept, and its id sequence goes on past ids already
 * pruned (an outbox row may still name one); alerts gain their acknowledgement columns, empty.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { Store } from '../../src/state/store.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-migrate-'));
  file = path.join(dir, 'state.db');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A version-8 state file with one firing alert and five events, the two newest pruned. */
function writeVersion8(): void {
  const old = Store.open(file, { migrations: ALL_MIGRATIONS.filter((m) => m.version <= 8) });
  try {
    old.db
      .prepare(
        `INSERT INTO alerts (fingerprint, job, check_name, status, severity, summary, details, labels,
           first_seen_at, last_seen_at, seen_count, fired_at, last_notified_at)
         VALUES ('failed_runs/run/1', 'runs', 'failed_runs', 'firing', 'warning', 'It failed', '{}',
           '{"check":"failed_runs"}', 1, 1, 1, 1, 1)`,
      )
      .run();
    const insert = old.db.prepare(
      `INSERT INTO events (fingerprint, kind, at, payload) VALUES ('failed_runs/run/1', ?, ?, '{}')`,
    );
    for (const [i, kind] of ['firing', 'repeat', 'escalated', 'repeat', 'resolved'].entries()) insert.run(kind, i);
    old.db.prepare('DELETE FROM events WHERE id > 3').run();
  } finally {
    old.close();
  }
}

describe('migration 009 (acknowledge)', () => {
  it('keeps every event with its id, continues the id sequence, and takes the new kinds', () => {
    writeVersion8();
    const store = Store.open(file);
    try {
      expect(store.schemaVersion()).toBeGreaterThanOrEqual(9);
      expect(store.db.prepare('SELECT id, kind FROM events ORDER BY id').all()).toEqual([
        { id: 1, kind: 'firing' },
        { id: 2, kind: 'repeat' },
        { id: 3, kind: 'escalated' },
      ]);
      const id = store.db
        .prepare<[], { id: number }>(
          `INSERT INTO events (fingerprint, kind, at, payload) VALUES ('failed_runs/run/1', 'acknowledged', 9, '{}') RETURNING id`,
        )
        .get()?.id;
      expect(id).toBe(6);
      expect(() =>
        store.db.prepare(`INSERT INTO events (fingerprint, kind, at, payload) VALUES ('x', 'snoozed', 9, '{}')`).run(),
      ).toThrow(/CHECK constraint failed/);
      const indexes = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'`);
      expect(indexes.all().map((r) => (r as { name: string }).name)).toEqual(
        expect.arrayContaining(['events_at', 'events_fingerprint']),
      );
      expect(alertStoreOf(store).get('failed_runs/run/1')).toMatchObject({ status: 'firing', acknowledgement: null });
    } finally {
      store.close();
    }
  });

  it('refuses a surface other than console, cli or slack', () => {
    writeVersion8();
    const store = Store.open(file);
    try {
      expect(() => store.db.prepare(`UPDATE alerts SET acknowledged_via = 'email'`).run()).toThrow(
        /CHECK constraint failed/,
      );
    } finally {
      store.close();
    }
  });
});
