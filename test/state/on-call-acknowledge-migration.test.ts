/**
 * Migration 018 on both engines: `alerts.acknowledged_via` takes `pagerduty` and `opsgenie`, and an
 * acknowledgement given before keeps its surface, whether the state was at 11 or at 17.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import type { Store } from '../../src/state/store.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

const FINGERPRINTS = ['failed_runs/run/1', 'failed_runs/run/2'];

/** Two firing alerts, the first acknowledged in Slack, written by the migrations `migrations`. */
function writeOld(state: TestState, versions: (v: number) => boolean): void {
  const old = state.open({ migrations: ALL_MIGRATIONS.filter((m) => versions(m.version)), clock: new ManualClock(1) });
  const insert = old.db.prepare(
    `INSERT INTO alerts (fingerprint, job, check_name, status, severity, summary, details, labels,
       first_seen_at, last_seen_at, seen_count, fired_at, last_notified_at)
     VALUES (?, 'runs', 'failed_runs', 'firing', 'warning', 'It failed', '{}', '{"check":"failed_runs"}', 1, 1, 1, 1, 1)`,
  );
  for (const fp of FINGERPRINTS) insert.run(fp);
  old.db
    .prepare(
      `UPDATE alerts SET acknowledged_at = 5, acknowledged_by = 'alice', acknowledged_via = 'slack' WHERE fingerprint = ?`,
    )
    .run(FINGERPRINTS[0]);
  old.close();
}

describe.each(STATE_BACKENDS)('migration 018 (on-call acknowledge) on $name', (backend) => {
  const states: TestState[] = [];
  afterEach(() => {
    for (const s of states.splice(0)) s.cleanup();
  });

  it.each([
    ['a state at 11', (v: number) => v <= 11],
    ['a state at 17, the last before it', (v: number) => v <= 17],
  ])('takes %s: keeps the acknowledgement given, takes the new surfaces', (_, versions) => {
    const state = backend.fresh();
    states.push(state);
    writeOld(state, versions);
    const store: Store = state.open({ clock: new ManualClock(2) });
    const steps = store.db
      .prepare<[], { version: number }>('SELECT version FROM schema_migrations ORDER BY version')
      .all()
      .map((r) => Number(r.version));
    expect(steps).toEqual(ALL_MIGRATIONS.map((m) => m.version));
    expect(alertStoreOf(store).get(FINGERPRINTS[0]!)?.acknowledgement).toEqual({
      by: 'alice',
      via: 'slack',
      at: 5,
      comment: null,
    });

    const taken = acknowledge(store, { fingerprint: FINGERPRINTS[1]!, by: 'Bob', via: 'pagerduty', now: 9 });
    expect(taken.outcome).toBe('acknowledged');
    expect(alertStoreOf(store).get(FINGERPRINTS[1]!)?.acknowledgement?.via).toBe('pagerduty');
    // The CHECK still holds: a surface nobody named is refused.
    expect(() =>
      store.db
        .prepare(`UPDATE alerts SET acknowledged_via = 'carrier-pigeon' WHERE fingerprint = ?`)
        .run(FINGERPRINTS[1]),
    ).toThrow();
  });
});
