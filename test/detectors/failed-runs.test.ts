import { describe, expect, it } from 'vitest';
import type { Run, RunListItem } from '../../src/api/schemas.js';
import { SettledRunSummary } from '../../src/collectors/settled-runs.js';
import type { RunsSnapshot } from '../../src/collectors/snapshot.js';
import type { Detection } from '../../src/detectors/finding.js';
import { runContextAsk } from '../../src/detectors/run-context.js';
import { failedRuns, failedRunsConfig, judgeRun, type RunVerdict } from '../../src/detectors/failed-runs.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { ACTIVE_RUN_STATES, FAILED_RUN_STATES } from '../../src/config/state-words.js';
import { ago, appListItem, expectWellFormed, MINUTE, NOW, run, runListItem, runsSnapshot, step } from './fixtures.js';

const options = { ...failedRunsConfig.parse({ retrying_grace: '30m' }), active_states: [...ACTIVE_RUN_STATES] };
const { error, done, running } = VOCABULARY.run;

/** The snapshot with the open failed_runs alerts' details, as the runs collector carries them. */
function withTold(snapshot: RunsSnapshot, told: Record<number, Record<string, string>> | undefined): RunsSnapshot {
  if (!told) return snapshot;
  return { ...snapshot, openFailures: new Map(Object.entries(told).map(([id, d]) => [Number(id), d])) };
}

/** A run of shop-prod that failed at install_modules. */
function failedUpdate(o: Partial<Run> = {}): Run {
  return run({
    state: error,
    steps: [
      step({ name: 'pull_code' }),
      step({ name: 'install_modules', state: VOCABULARY.step.error, reason: 'timeout after 600s' }),
      step({ name: 'restart', state: VOCABULARY.step.pending, started_at: null, updated_at: null }),
    ],
    ...o,
  });
}

/** What an open alert told of run 100 when it failed (its details, as stored). */
const TOLD_100 = { run: '#100', step: 'install_modules', reason: 'timeout after 600s', since: ago(10 * MINUTE) };

/**
 * Runs of one snapshot and the failed_runs findings they make: who supersedes whom. The fourth
 * element: the runs with an open failed_runs alert (what it told of them).
 */
const SUPERSEDING: [string, (RunListItem | Run)[], string[], Record<number, Record<string, string>>?][] = [
  ['a run that succeeded', [run({ state: done })], []],
  ['a run still going', [run({ state: running })], []],
  [
    'failed, then a newer success of the same app and action',
    [failedUpdate({ id: 100 }), run({ id: 101, state: done, created_at: ago(5 * MINUTE) })],
    [],
  ],
  [
    'failed twice: only the newest is reported',
    [failedUpdate({ id: 100 }), failedUpdate({ id: 101, created_at: ago(5 * MINUTE) })],
    ['failed_runs/run/101'],
  ],
  [
    'failed and alerted, a newer run still going: the failure stands',
    [failedUpdate({ id: 100 }), run({ id: 101, state: running, created_at: ago(5 * MINUTE) })],
    ['failed_runs/run/100'],
    { 100: TOLD_100 },
  ],
  [
    'failed unannounced, a newer run still going: superseded, the newer run decides',
    [failedUpdate({ id: 100 }), run({ id: 101, state: running, created_at: ago(5 * MINUTE) })],
    [],
  ],
  [
    'failed and alerted, a newer run retrying within grace: the failure stands, the newer is held',
    [
      failedUpdate({ id: 100 }),
      run({ id: 101, state: error, retrying: true, created_at: ago(5 * MINUTE), updated_at: ago(MINUTE) }),
    ],
    ['failed_runs/run/101', 'failed_runs/run/100'],
    { 100: TOLD_100 },
  ],
  [
    'failed unannounced, a newer run retrying within grace: only the newer, held',
    [
      failedUpdate({ id: 100 }),
      run({ id: 101, state: error, retrying: true, created_at: ago(5 * MINUTE), updated_at: ago(MINUTE) }),
    ],
    ['failed_runs/run/101'],
  ],
  [
    'two failures, the newer alerted and retried (running again): the older is never announced',
    [
      failedUpdate({ id: 100, created_at: ago(60 * MINUTE) }),
      run({ id: 101, state: running, created_at: ago(20 * MINUTE), updated_at: ago(MINUTE) }),
    ],
    ['failed_runs/run/101'],
    { 101: { ...TOLD_100, run: '#101' } },
  ],
  [
    'two failures, the newer retried before anyone saw it fail: the older is never announced',
    [
      failedUpdate({ id: 100, created_at: ago(60 * MINUTE) }),
      run({ id: 101, state: running, created_at: ago(20 * MINUTE), updated_at: ago(MINUTE) }),
    ],
    [],
  ],
  [
    'alerted; a newer failure nobody was told of behind a newer run going: the alerted one stands',
    [
      failedUpdate({ id: 100, created_at: ago(60 * MINUTE) }),
      failedUpdate({ id: 101, created_at: ago(30 * MINUTE) }),
      run({ id: 102, state: running, created_at: ago(5 * MINUTE) }),
    ],
    ['failed_runs/run/100'],
    { 100: TOLD_100 },
  ],
  [
    'alerted, retried, and a newer run of the group succeeded: over',
    [
      run({ id: 100, state: running, created_at: ago(60 * MINUTE) }),
      run({ id: 101, state: done, created_at: ago(5 * MINUTE) }),
    ],
    [],
    { 100: TOLD_100 },
  ],
  ['alerted, retried, and the run succeeded: over', [run({ id: 100, state: done })], [], { 100: TOLD_100 }],
  [
    'a success of another action does not supersede',
    [
      failedUpdate({ id: 100 }),
      run({ id: 101, action: 'restart', workflow: 'app_restart', state: done, created_at: ago(5 * MINUTE) }),
    ],
    ['failed_runs/run/100'],
  ],
  [
    'a success of another app does not supersede',
    [
      failedUpdate({ id: 100 }),
      run({ id: 101, app_id: 2, record: 'shop-staging', state: done, created_at: ago(5 * MINUTE) }),
    ],
    ['failed_runs/run/100'],
  ],
  [
    'list order does not matter: superseding goes by creation time',
    [
      run({ id: 99, state: done, created_at: ago(5 * MINUTE) }),
      failedUpdate({ id: 100, created_at: ago(60 * MINUTE) }),
    ],
    [],
  ],
  [
    'retrying within grace: held (pending), not yet announced',
    [failedUpdate({ retrying: true, updated_at: ago(10 * MINUTE) })],
    ['failed_runs/run/100'],
  ],
  ['retrying past grace', [failedUpdate({ retrying: true, updated_at: ago(31 * MINUTE) })], ['failed_runs/run/100']],
  [
    'watcher waiting is running, not failed',
    [
      run({
        workflow: 'app_backup',
        action: 'backup',
        state: error,
        watcher: { state: 'waiting', progress: 'dumping database', reason: null },
      }),
    ],
    [],
  ],
];

describe('judgeRun', () => {
  it.each<[string, RunListItem, Run | undefined, RunVerdict]>([
    ['failed state', runListItem({ state: error }), undefined, { kind: 'failed', reason: 'failed_state' }],
    ['done', runListItem({ state: done }), undefined, { kind: 'settled', reason: 'not_failed' }],
    ['running', runListItem({ state: running }), undefined, { kind: 'pending', reason: 'active_state' }],
    [
      'retrying within grace',
      runListItem({ state: error, retrying: true, updated_at: ago(29 * MINUTE) }),
      undefined,
      { kind: 'pending', reason: 'retrying_within_grace' },
    ],
    [
      'retrying exactly at the grace',
      runListItem({ state: error, retrying: true, updated_at: ago(30 * MINUTE) }),
      undefined,
      { kind: 'failed', reason: 'retrying_past_grace' },
    ],
    [
      'retrying after grace',
      runListItem({ state: error, retrying: true, updated_at: ago(45 * MINUTE) }),
      undefined,
      { kind: 'failed', reason: 'retrying_past_grace' },
    ],
    [
      'retrying with no known time',
      runListItem({ state: error, retrying: true, created_at: null, updated_at: null }),
      undefined,
      { kind: 'pending', reason: 'retrying_within_grace' },
    ],
    ...(['failed', 'timeout', 'stopped'] as const).map((w): [string, RunListItem, Run, RunVerdict] => [
      `watcher ${w} while the run says running`,
      runListItem({ state: running }),
      run({ state: running, watcher: { state: w, progress: null, reason: 'x' } }),
      { kind: 'failed', reason: 'watcher_failed' },
    ]),
    [
      'watcher waiting while the run says error',
      runListItem({ state: error }),
      run({ state: error, watcher: { state: 'waiting', progress: 'dumping database', reason: null } }),
      { kind: 'pending', reason: 'watcher_waiting' },
    ],
    [
      'watcher completed, run done',
      runListItem({ state: done }),
      run({ state: done, watcher: { state: 'completed', progress: null, reason: null } }),
      { kind: 'settled', reason: 'not_failed' },
    ],
  ])('%s', (_name, item, detail, verdict) => {
    expect(judgeRun(item, detail, options, NOW)).toEqual(verdict);
  });
});

describe('failedRuns', () => {
  it('reports a failed run with action, app, environment, step and reason', () => {
    const findings = failedRuns(runsSnapshot([failedUpdate()]), options, NOW);
    expectWellFormed(findings);
    expect(findings).toEqual([
      {
        fingerprint: 'failed_runs/run/100',
        check: 'failed_runs',
        severity: 'critical',
        summary: 'Update of shop-prod (production) failed at step install_modules: timeout after 600s',
        details: {
          run: '#100',
          workflow: 'app_update',
          action: 'update',
          state: error,
          app_id: '1',
          step: 'install_modules',
          reason: 'timeout after 600s',
          since: ago(10 * MINUTE),
        },
        labels: {
          check: 'failed_runs',
          namespace: 'acme',
          project: 'shop',
          environment_type: 'production',
          app: 'shop-prod',
          server: 'web-01',
          workflow: 'app_update',
          action: 'update',
          step: 'install_modules',
        },
        url: 'https://shop.example.com',
        since: ago(10 * MINUTE),
        subject: { type: 'run', id: 100 },
      },
    ]);
  });

  it.each(SUPERSEDING)('%s', (_name, runs, fingerprints, told) => {
    const findings = failedRuns(withTold(runsSnapshot(runs), told), options, NOW);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(fingerprints);
  });

  // What the runs collector does with the look-back window: settled runs (neither failed nor
  // active, no watcher) summarised per group, not kept. The verdicts must not change.
  it.each(SUPERSEDING)('%s, with the settled runs summarised', (_name, runs, fingerprints, told) => {
    const summary = new SettledRunSummary();
    const isSettled = (r: RunListItem | Run) =>
      !FAILED_RUN_STATES.includes(r.state) &&
      !ACTIVE_RUN_STATES.includes(r.state) &&
      !('watcher' in r && r.watcher !== null);
    for (const r of runs) if (isSettled(r)) summary.add(r);
    const kept = runs.filter((r) => !isSettled(r));
    const snapshot = { ...withTold(runsSnapshot(kept), told), settledNewest: summary.newest };
    expect(failedRuns(snapshot, options, NOW).map((f) => f.fingerprint)).toEqual(fingerprints);
  });

  it('a summarised settled run supersedes only the failures older than it', () => {
    const summary = new SettledRunSummary();
    summary.add(runListItem({ id: 150, state: done, created_at: ago(30 * MINUTE) }));
    // Reading the same run again (a walk read again) changes nothing; an older one neither.
    summary.add(runListItem({ id: 150, state: done, created_at: ago(30 * MINUTE) }));
    summary.add(runListItem({ id: 120, state: done, created_at: ago(90 * MINUTE) }));
    const older = failedUpdate({ id: 100, created_at: ago(60 * MINUTE) });
    const newer = failedUpdate({ id: 200, created_at: ago(10 * MINUTE) });
    expect(failedRuns({ ...runsSnapshot([older]), settledNewest: summary.newest }, options, NOW)).toEqual([]);
    expect(
      failedRuns({ ...runsSnapshot([newer]), settledNewest: summary.newest }, options, NOW).map((f) => f.fingerprint),
    ).toEqual(['failed_runs/run/200']);
    // Same time: the higher id is the newer (ids grow), as the list orders them.
    const sameTime = failedUpdate({ id: 149, created_at: ago(30 * MINUTE) });
    expect(failedRuns({ ...runsSnapshot([sameTime]), settledNewest: summary.newest }, options, NOW)).toEqual([]);
  });

  it.each(['failed', 'timeout', 'stopped'] as const)('a watcher %s is a failure with its reason', (state) => {
    const backupRun = run({
      workflow: 'app_backup',
      action: 'backup',
      state: running,
      steps: [step({ name: 'prepare' }), step({ name: 'launch_backup' })],
      watcher: { state, progress: null, reason: 'archive upload refused' },
    });
    const [finding] = failedRuns(runsSnapshot([backupRun]), options, NOW);
    expect(finding?.summary).toBe(
      `Backup of shop-prod (production) failed on the server (watcher ${state}): archive upload refused`,
    );
    expect(finding?.details).toMatchObject({ watcher: state, reason: 'archive upload refused' });
    expect(finding?.severity).toBe('critical');
  });

  it('says how long a run past its grace has been retrying', () => {
    const [finding] = failedRuns(
      runsSnapshot([failedUpdate({ retrying: true, updated_at: ago(45 * MINUTE) })]),
      options,
      NOW,
    );
    expect(finding?.summary).toBe(
      'Update of shop-prod (production) failed at step install_modules: timeout after 600s (still retrying after 45m)',
    );
    expect(finding?.details.retrying).toBe('yes');
  });

  it('is a warning outside production', () => {
    const staging = appListItem({ id: 2, name: 'shop-staging', environment_type: 'staging' });
    const snap = runsSnapshot(
      [failedUpdate({ app_id: 2, record: 'shop-staging', environment_type: 'staging' })],
      [staging],
    );
    expect(failedRuns(snap, options, NOW)[0]?.severity).toBe('warning');
  });

  it('names a run on no app by its record and leaves app labels out', () => {
    const patch = run({
      id: 7,
      workflow: 'server_patch',
      action: 'patch',
      state: error,
      app_id: null,
      record: 'web-01',
      record_type: 'server',
      project: null,
      environment_type: null,
      steps: [step({ name: 'reboot', state: VOCABULARY.step.error, reason: 'host did not come back' })],
    });
    const [finding] = failedRuns(runsSnapshot([patch]), options, NOW);
    expectWellFormed([finding!]);
    expect(finding?.summary).toBe('Patch of web-01 failed at step reboot: host did not come back');
    expect(finding?.severity).toBe('warning');
    expect(finding?.labels).toEqual({
      check: 'failed_runs',
      namespace: 'acme',
      record: 'web-01',
      record_type: 'server',
      workflow: 'server_patch',
      action: 'patch',
      step: 'reboot',
    });
    expect(finding?.url).toBeNull();
  });

  it('reports a failed run without detail from its list item alone', () => {
    const [finding] = failedRuns(runsSnapshot([runListItem({ state: error })]), options, NOW);
    expect(finding?.summary).toBe('Update of shop-prod (production) failed');
    expect(finding?.labels.step).toBeUndefined();
  });

  it('folds a multi-line reason onto one line', () => {
    const r = failedUpdate({
      steps: [
        step({ name: 'install_modules', state: VOCABULARY.step.error, reason: 'Traceback:\n  File "x"\n  boom' }),
      ],
    });
    expect(failedRuns(runsSnapshot([r]), options, NOW)[0]?.summary).toBe(
      'Update of shop-prod (production) failed at step install_modules: Traceback: File "x" boom',
    );
  });

  it('gives the same fingerprint for the same run whatever else changed', () => {
    const before = failedRuns(
      runsSnapshot([failedUpdate({ retrying: true, updated_at: ago(31 * MINUTE) })]),
      options,
      NOW,
    );
    const after = failedRuns(runsSnapshot([failedUpdate()]), options, NOW + 60 * MINUTE);
    expect(before.map((f) => f.fingerprint)).toEqual(after.map((f) => f.fingerprint));
  });
});

describe('failedRuns follows a run through its retries (lineage)', () => {
  /** Run 100 restarted at install_modules two minutes ago: running again, same id (reference §4). */
  const runningAgain = (o: Partial<Run> = {}) =>
    run({
      state: running,
      updated_at: ago(2 * MINUTE),
      steps: [
        step({ name: 'pull_code' }),
        step({
          name: 'install_modules',
          state: VOCABULARY.step.running,
          started_at: ago(2 * MINUTE),
          updated_at: ago(2 * MINUTE),
        }),
        step({ name: 'restart', state: VOCABULARY.step.pending, started_at: null, updated_at: null }),
      ],
      ...o,
    });
  /** Run 100 failed again at install_modules one minute ago. */
  const failedAgain = (o: Partial<Run> = {}) =>
    failedUpdate({
      updated_at: ago(MINUTE),
      steps: [
        step({ name: 'pull_code' }),
        step({
          name: 'install_modules',
          state: VOCABULARY.step.error,
          started_at: ago(2 * MINUTE),
          updated_at: ago(MINUTE),
          reason: 'disk full',
        }),
      ],
      ...o,
    });
  const retrySince = { ...TOLD_100, retry_since: ago(2 * MINUTE), retry_step: 'install_modules' };
  const at = (ms: number) => new Date(NOW - ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

  it.each<[string, RunListItem | Run, Record<string, string>, Partial<Detection<'failed_runs'>> | null]>([
    [
      'a person retried it: running again, the alert stays open and says so, announcing nothing',
      runningAgain(),
      TOLD_100,
      {
        summary: `Update of shop-prod (production) failed at step install_modules: timeout after 600s; retrying since ${at(2 * MINUTE)}, step install_modules`,
        underway: true,
        since: ago(10 * MINUTE),
        details: {
          run: '#100',
          workflow: 'app_update',
          action: 'update',
          state: running,
          app_id: '1',
          step: 'install_modules',
          reason: 'timeout after 600s',
          retry_since: ago(2 * MINUTE),
          retry_step: 'install_modules',
          since: ago(10 * MINUTE),
        },
      },
    ],
    [
      'running again, read from the list alone: the retry dated by its last update',
      runListItem({ state: running, updated_at: ago(3 * MINUTE) }),
      TOLD_100,
      { underway: true, details: expect.objectContaining({ retry_since: ago(3 * MINUTE), step: 'install_modules' }) },
    ],
    [
      'the retry failed: the same alert escalates, saying so',
      failedAgain(),
      retrySince,
      {
        escalation: 'retry failed',
        summary: 'Update of shop-prod (production) failed again after a retry at step install_modules: disk full',
        since: ago(10 * MINUTE),
        details: expect.objectContaining({ retries: '1', failed_at: ago(MINUTE), since: ago(10 * MINUTE) }),
      },
    ],
    [
      'retried and failed again between two reads: a later failure than the one told escalates too',
      failedAgain(),
      TOLD_100,
      { escalation: 'retry failed', details: expect.objectContaining({ retries: '1' }) },
    ],
    [
      'the failure already told, seen again: no escalation',
      failedUpdate({ updated_at: ago(10 * MINUTE) }),
      TOLD_100,
      {
        escalation: undefined,
        summary: 'Update of shop-prod (production) failed at step install_modules: timeout after 600s',
      },
    ],
    [
      'the escalated failure seen again: no second escalation',
      failedAgain(),
      { ...TOLD_100, retries: '1', failed_at: ago(MINUTE), step: 'install_modules', reason: 'disk full' },
      { escalation: undefined, details: expect.objectContaining({ retries: '1' }) },
    ],
    [
      'a second retry running: still says the retries that failed',
      runningAgain({ updated_at: ago(MINUTE) }),
      { ...TOLD_100, retries: '1', failed_at: ago(5 * MINUTE) },
      {
        underway: true,
        summary: `Update of shop-prod (production) failed again after a retry at step install_modules: timeout after 600s; retrying since ${at(2 * MINUTE)}, step install_modules`,
      },
    ],
    [
      'the retry failed and the service retries it by itself: not escalated, held while within the grace',
      failedAgain({ retrying: true }),
      retrySince,
      {
        escalation: undefined,
        holdForMs: 30 * MINUTE,
        summary:
          'Update of shop-prod (production) failed at step install_modules: disk full (the service retries it by itself)',
      },
    ],
    [
      'endless automatic retries: the grace counts from when it was first seen retrying, not from updated_at',
      failedAgain({ retrying: true }),
      { ...TOLD_100, retrying_since: ago(40 * MINUTE) },
      {
        holdForMs: undefined,
        escalation: undefined,
        summary:
          'Update of shop-prod (production) failed at step install_modules: disk full (still retrying after 40m)',
        details: expect.objectContaining({ retrying: 'yes', retrying_since: ago(40 * MINUTE) }),
      },
    ],
    [
      'the service retried it by itself: running again, it keeps since when it has been retrying',
      runningAgain(),
      { ...TOLD_100, retrying: 'yes', retrying_since: ago(25 * MINUTE) },
      {
        underway: true,
        details: expect.objectContaining({ retrying_since: ago(25 * MINUTE), retry_since: ago(2 * MINUTE) }),
      },
    ],
    [
      'a watcher failure retried: said as the server failure it was',
      runningAgain({ workflow: 'app_backup', action: 'backup' }),
      { run: '#100', watcher: 'timeout', reason: 'archive upload refused', since: ago(10 * MINUTE) },
      {
        underway: true,
        summary: `Backup of shop-prod (production) failed on the server (watcher timeout): archive upload refused; retrying since ${at(2 * MINUTE)}, step install_modules`,
      },
    ],
    ['the retry succeeded: no finding, the alert resolves', run({ state: done }), retrySince, null],
  ])('%s', (_name, theRun, told, expected) => {
    const findings = failedRuns(withTold(runsSnapshot([theRun]), { 100: told }), options, NOW);
    expectWellFormed(findings);
    if (expected === null) {
      expect(findings).toEqual([]);
      return;
    }
    expect(findings).toHaveLength(1);
    const present = Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined));
    expect(findings[0]).toMatchObject({ fingerprint: 'failed_runs/run/100', ...present });
    for (const key of ['underway', 'escalation', 'holdForMs'] as const) {
      if (key in expected) expect(findings[0]?.[key]).toEqual(expected[key]);
    }
  });

  it('a run retrying by itself, first seen: held for the grace from that sighting', () => {
    const [finding] = failedRuns(
      runsSnapshot([failedUpdate({ retrying: true, updated_at: ago(MINUTE) })]),
      options,
      NOW,
    );
    expect(finding).toMatchObject({
      holdForMs: 30 * MINUTE,
      details: { retrying: 'yes', retrying_since: ago(19 * MINUTE) },
    });
  });

  it('the failed step time counts when older than the last update (grace from the first failure)', () => {
    const late = failedUpdate({
      retrying: true,
      updated_at: ago(MINUTE),
      steps: [
        step({ name: 'install_modules', state: VOCABULARY.step.error, updated_at: ago(35 * MINUTE), reason: 'x' }),
      ],
    });
    expect(judgeRun(late, late, options, NOW)).toEqual({ kind: 'failed', reason: 'retrying_past_grace' });
  });
});

describe('runContextAsk of a failed_runs alert', () => {
  it.each<[string, Record<string, string>, string | null]>([
    ['a first failure: the log around it', { since: ago(10 * MINUTE) }, ago(10 * MINUTE)],
    [
      'a retry that failed again: the log around the latest failure',
      { since: ago(10 * MINUTE), failed_at: ago(MINUTE) },
      ago(MINUTE),
    ],
    ['no time known', {}, null],
  ])('%s', (_name, times, at) => {
    const details = { app_id: '1', workflow: 'app_update', action: 'update', ...times };
    expect(runContextAsk({ subject: { type: 'run', id: 100 }, details })).toEqual({
      runId: 100,
      appId: 1,
      workflow: 'app_update',
      action: 'update',
      at,
    });
  });
});
