/**
 * Keys unique to one state file: `dw-<installation>.<number>-…`. A new (or lost) state file never
 * repeats an earlier one's key, so the service never answers it with an old request's answer; the
 * same state file always sends an attempt with its STORED key; a state file from before migration
 * 005 gets an installation id and keeps the keys it already wrote; retention pruning a record's
 * attempts does not bring an old key back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RemediationStore } from '../../src/remediation/remediation-store.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { pruneState } from '../../src/state/retention.js';
import { STATE_BACKENDS, type StateBackend, type TestState } from '../helpers/state-backends.js';
import { appOf, Harness, HOUR, installationOf, MINUTE, startSim, type SimWithClock } from './remediation-fixture.js';

const DAY = 24 * HOUR;
const SECTION = `
enabled: true
dry_run: false
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging } }
`;

let open: Harness[] = [];
const sims: SimWithClock[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
  for (const s of sims.splice(0)) await s.sim.close();
});

async function sim(): Promise<SimWithClock> {
  const s = await startSim();
  sims.push(s);
  return s;
}

let backend: StateBackend;

/** A harness on a fresh state of its own (or the one `at` holds: a restart). */
function harness(s: SimWithClock, section = SECTION, at?: { dir: string; state: TestState }): Harness {
  const h = Harness.open(s, section, at ? { ...at, backend } : { backend });
  open.push(h);
  return h;
}

/** Closes a harness and keeps its state file, as a stopped (or crashed) process leaves it. */
async function stop(h: Harness): Promise<void> {
  open = open.filter((x) => x !== h);
  await h.close({ keepDir: true });
}

const keyNumber = (h: Harness) =>
  (
    h.store.db.prepare(`SELECT value FROM meta WHERE key = 'remediation_key_number'`).get() as
      { value: string } | undefined
  )?.value;

describe.each(STATE_BACKENDS)('on $name', (b) => {
  beforeEach(() => {
    backend = b;
  });

  describe('installation ids', () => {
    it('two fresh state files draw different ids (ten hex digits); a restart reads the same one', async () => {
      const s = await sim();
      const a = harness(s);
      const b = harness(s);
      expect(a.installation).toMatch(/^[0-9a-f]{10}$/);
      expect(b.installation).toMatch(/^[0-9a-f]{10}$/);
      expect(a.installation).not.toBe(b.installation);
      await stop(a);
      const again = harness(s, SECTION, a);
      expect(again.installation).toBe(a.installation);
    });

    it.each([
      [
        'missing',
        `DELETE FROM meta WHERE key = 'installation_id'`,
        /state file (.*state\.db|postgres:\/\/.*) has no installation id/,
      ],
      [
        'not what migration 005 writes',
        `UPDATE meta SET value = 'x-1' WHERE key = 'installation_id'`,
        /meta\.installation_id "x-1" is not 8-16 lowercase letters or digits/,
      ],
    ])(
      'a state file whose id is %s (edited by hand) is refused with a message naming the file',
      async (_what, edit, message) => {
        const s = await sim();
        const h = harness(s);
        h.store.db.prepare(edit).run();
        expect(() => new RemediationStore(h.store).installation()).toThrow(message);
      },
    );
  });

  describe('a new state file', () => {
    it('does not repeat the lost state file’s key: the service retries the run again instead of replaying the old answer', async () => {
      const s = await sim();
      const appId = appOf(s.sim, 'staging');
      const run = s.sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'check' });
      // The first installation retries the run; that retry fails at the same step.
      s.sim.control.failNextRun({ appId, step: 'check', reason: 'still broken' });
      const lost = harness(s);
      await lost.cycleAndPass({ runs: [run.id] });
      s.clock.advance(10 * MINUTE);
      await lost.pass();
      expect(lost.attempts()).toMatchObject([{ attempt: 1, outcome: 'run_failed' }]);
      const oldKey = lost.attempts()[0]!.key;

      // Its state file is lost; a new one starts over on the same failed run, attempt 1 again.
      const fresh = harness(s);
      await fresh.cycleAndPass({ runs: [run.id] });
      const newKey = fresh.attempts()[0]!.key;
      expect(fresh.attempts()).toMatchObject([{ attempt: 1 }]);
      expect(newKey).toBe(`dw-${fresh.installation}.1-retry-staging-run${run.id}-a1`);
      expect(newKey).not.toBe(oldKey);
      // A real retry: the run goes again and succeeds (the old key would have replayed "started"
      // for the retry that failed, and the new installation would never have acted).
      s.clock.advance(10 * MINUTE);
      await fresh.pass();
      expect(fresh.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
      expect(fresh.changes('runs.retry')).toEqual([
        { key: oldKey, status: 200 },
        { key: newKey, status: 200 },
      ]);
    });
  });

  describe('the same state file', () => {
    it('sends an attempt written before a crash with its stored key, and takes no new number for it', async () => {
      const s = await sim();
      const first = harness(s);
      const run = s.sim.control.addRun({
        appId: appOf(s.sim, 'staging'),
        action: 'update',
        state: 'error',
        failedStep: 'check',
      });
      await first.cycle({ runs: [run.id] });
      const key = `dw-${first.installation}.1-retry-staging-run${run.id}-a1`;
      expect(first.attempts()).toMatchObject([{ key, status: 'planned', sendCount: 0 }]);
      // The process dies between writing the attempt and sending it.
      await stop(first);

      const restarted = harness(s, SECTION, first);
      await restarted.cycleAndPass({ runs: [run.id] });
      expect(restarted.changes('runs.retry')).toEqual([{ key, status: 200 }]);
      expect(restarted.attempts()).toHaveLength(1);
      expect(keyNumber(restarted)).toBe('1');
    });

    it('a dry run shows the key it would send without taking its number', async () => {
      const s = await sim();
      const dry = harness(s, SECTION.replace('dry_run: false', 'dry_run: true'));
      const run = s.sim.control.addRun({
        appId: appOf(s.sim, 'staging'),
        action: 'update',
        state: 'error',
        failedStep: 'check',
      });
      await dry.cycle({ runs: [run.id] });
      expect(dry.audit()).toMatchObject([
        { decision: 'dry_run', key: `dw-${dry.installation}.1-retry-staging-run${run.id}-a1` },
      ]);
      expect(keyNumber(dry)).toBeUndefined();
    });

    it('never gives a key number out twice, even after retention pruned the attempts that used it', async () => {
      const s = await sim();
      const h = harness(s);
      const run = s.sim.control.addRun({
        appId: appOf(s.sim, 'staging'),
        action: 'update',
        state: 'error',
        failedStep: 'check',
      });
      await h.cycleAndPass({ runs: [run.id] });
      s.clock.advance(10 * MINUTE);
      await h.pass();
      await h.cycle({ runs: [run.id] }); // the run is done: the alert resolves
      const first = h.attempts()[0]!;
      expect(first).toMatchObject({
        attempt: 1,
        outcome: 'succeeded',
        key: `dw-${h.installation}.1-retry-staging-run${run.id}-a1`,
      });

      s.clock.advance(31 * DAY);
      const pruned = pruneState(h.store, { now: s.clock.now(), retentionMs: 30 * DAY });
      expect(pruned.deleted.remediation_attempts).toBe(1);

      // The same run fails again: attempt 1 once more (its history is gone), under a new key.
      s.sim.control.setRunState(run.id, { state: 'error', failedStep: 'check', reason: 'broken again' });
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.attempts()).toMatchObject([{ attempt: 1, key: `dw-${h.installation}.2-retry-staging-run${run.id}-a1` }]);
      s.clock.advance(10 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
      expect(h.changes('runs.retry').map((c) => c.status)).toEqual([200, 200]);
    });
  });

  describe('a state file from before migration 005', () => {
    it('gets an installation id; its attempts keep their stored keys; its suspensions stay whole-policy', async () => {
      const s = await sim();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-remediation-'));
      const staging = s.sim.control.addRun({
        appId: appOf(s.sim, 'staging'),
        action: 'update',
        state: 'error',
        failedStep: 'check',
      });
      const dev = s.sim.control.addRun({
        appId: appOf(s.sim, 'development'),
        action: 'update',
        state: 'error',
        failedStep: 'check',
      });
      const oldKey = `dw-retry-staging-run${staging.id}-a1`;

      // What the previous version left: an attempt written (its key derived the old way) and not yet
      // sent, and a policy suspended by access_denied, when suspensions were whole-policy.
      const state = backend.fresh(dir);
      const old = state.open({
        migrations: ALL_MIGRATIONS.slice(0, 4),
      });
      expect(old.schemaVersion()).toBe(4);
      old.db
        .prepare(
          `INSERT INTO remediation_attempts (policy, action, record_type, record_id, attempt, idempotency_key, body, fingerprint,
           labels, severity, summary, life, status, planned_at, next_at)
         VALUES ('retry-staging', 'runs.retry', 'run', ?, 1, ?, '{"now":false}', ?, '{"check":"failed_runs","environment_type":"staging"}',
           'warning', 'Update failed', ?, 'planned', ?, ?)`,
        )
        .run(staging.id, oldKey, `failed_runs/run/${staging.id}`, s.clock.now(), s.clock.now(), s.clock.now());
      old.db
        .prepare(
          `INSERT INTO remediation_suspensions (policy, action, code, message, at) VALUES ('retry-dev', 'runs.retry', 'access_denied', 'no', ?)`,
        )
        .run(s.clock.now());
      old.close();

      const h = harness(
        s,
        `${SECTION}  - { name: retry-dev, action: runs.retry, match: { environment_type: [development, staging] }, match_re: { step: "check" } }\n`,
        { dir, state },
      );
      expect(h.store.schemaVersion()).toBe(ALL_MIGRATIONS.at(-1)!.version);
      expect(h.installation).toMatch(/^[0-9a-f]{10}$/);

      // The attempt is sent with the key it was written with (its alert still firing, as it was).
      await h.observe({ runs: [staging.id] });
      await h.pass();
      expect(h.changes('runs.retry')).toEqual([{ key: oldKey, status: 200 }]);
      expect(h.attempts()).toMatchObject([{ key: oldKey, status: 'following' }]);
      s.clock.advance(10 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ key: oldKey, outcome: 'succeeded' }]);

      // The old suspension still covers the whole policy, development and staging alike, under the
      // alert it always had. A new attempt (of the other policy) gets a key of the new form.
      const another = s.sim.control.addRun({
        appId: appOf(s.sim, 'staging'),
        action: 'update_modules',
        state: 'error',
        failedStep: 'check',
      });
      const { cycle } = await h.cycleAndPass({ runs: [dev.id, another.id] });
      expect(cycle).toMatchObject({ planned: 1, skipped: { policy_suspended: 2 } });
      expect(
        h
          .audit()
          .filter((a) => a.reason === 'policy_suspended')
          .map((a) => [a.policy, a.environment]),
      ).toEqual([
        ['retry-dev', 'development'],
        ['retry-dev', 'staging'],
      ]);
      expect(h.openAlerts().filter((a) => a.check === 'watchdog')).toMatchObject([
        {
          fingerprint: 'watchdog/remediation/retry-dev',
          summary: 'Remediation policy retry-dev suspended: the service refused runs.retry with access_denied',
        },
      ]);
      expect(h.changes('runs.retry').at(-1)).toEqual({
        key: `dw-${h.installation}.1-retry-staging-run${another.id}-a1`,
        status: 200,
      });
      expect(installationOf(h.store)).toBe(h.installation);
    });
  });
});
