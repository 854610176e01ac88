import { describe, expect, it } from 'vitest';
import type { Run, RunListItem } from '../../src/api/schemas.js';
import { stuckRuns, stuckRunsConfig } from '../../src/detectors/stuck-runs.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { ago, expectWellFormed, HOUR, MINUTE, NOW, run, runListItem, runsSnapshot, step } from './fixtures.js';

const options = stuckRunsConfig.parse({ max_duration: '2h' });
const { running, queued, done, error } = VOCABULARY.run;

describe('stuckRuns', () => {
  it.each<[string, RunListItem | Run, boolean]>([
    ['running longer than max', runListItem({ state: running, created_at: ago(3 * HOUR) }), true],
    ['queued longer than max', runListItem({ state: queued, created_at: ago(3 * HOUR) }), true],
    ['running exactly max', runListItem({ state: running, created_at: ago(2 * HOUR) }), false],
    ['running shorter than max', runListItem({ state: running, created_at: ago(HOUR) }), false],
    ['done long ago', runListItem({ state: done, created_at: ago(3 * HOUR) }), false],
    ['failed long ago (failed_runs reports it)', runListItem({ state: error, created_at: ago(3 * HOUR) }), false],
    [
      'watcher waiting, whatever the run state says',
      run({
        state: error,
        created_at: ago(3 * HOUR),
        watcher: { state: 'waiting', progress: 'uploading off-site', reason: null },
      }),
      true,
    ],
    [
      'watcher timed out (failed, not stuck)',
      run({
        state: running,
        created_at: ago(3 * HOUR),
        watcher: { state: 'timeout', progress: null, reason: 'no report in 6h' },
      }),
      false,
    ],
    [
      // Its report ends the watcher's hold (§3.2), not the run: a run still in an active state for
      // hours after is stuck, and no other check would say so (failed_runs calls it still going).
      'watcher completed, the run still running long after',
      run({
        state: running,
        created_at: ago(3 * HOUR),
        watcher: { state: 'completed', progress: null, reason: null },
      }),
      true,
    ],
    [
      'watcher completed, the run done',
      run({ state: done, created_at: ago(3 * HOUR), watcher: { state: 'completed', progress: null, reason: null } }),
      false,
    ],
    [
      'no created_at: first step start stands in',
      run({ state: running, created_at: null, steps: [step({ started_at: ago(3 * HOUR) })] }),
      true,
    ],
    ['no time known at all: not judged', run({ state: running, created_at: null, steps: [] }), false],
  ])('%s', (_name, r, stuck) => {
    const findings = stuckRuns(runsSnapshot([r]), options, NOW);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(stuck ? ['stuck_runs/run/100'] : []);
  });

  // A retry restarts the failed run under the same id (reference §4): its age is the retry's.
  const told = { run: '#100', step: 'install_modules', reason: 'x', since: ago(3 * HOUR) };
  const retried = (retryStartedAgo: number) =>
    run({
      state: running,
      created_at: ago(4 * HOUR),
      updated_at: ago(retryStartedAgo),
      steps: [
        step({ name: 'pull_code', started_at: ago(4 * HOUR), updated_at: ago(4 * HOUR - MINUTE) }),
        step({
          name: 'install_modules',
          state: running,
          started_at: ago(retryStartedAgo),
          updated_at: ago(retryStartedAgo),
        }),
      ],
    });
  it.each<[string, Run, Record<string, string> | undefined, string | null]>([
    ['created 4h ago, retried 5m ago after a failure told: not stuck', retried(5 * MINUTE), told, null],
    ['retried 3h ago and still running: stuck for 3h', retried(3 * HOUR), told, '3h'],
    ['the retry as its alert dated it', retried(5 * MINUTE), { ...told, retry_since: ago(150 * MINUTE) }, '2h 30m'],
    ['no failure told: measured from its creation', retried(5 * MINUTE), undefined, '4h'],
  ])('%s', (_name, r, failure, runningFor) => {
    const snapshot = { ...runsSnapshot([r]), ...(failure && { openFailures: new Map([[100, failure]]) }) };
    const findings = stuckRuns(snapshot, options, NOW);
    expect(findings.map((f) => f.details.running_for ?? null)).toEqual(runningFor === null ? [] : [runningFor]);
  });

  it('names the running step and how long it has been running', () => {
    const r = run({
      state: running,
      created_at: ago(3 * HOUR),
      steps: [
        step({ name: 'pull_code', started_at: ago(3 * HOUR) }),
        step({
          name: 'update_modules',
          state: VOCABULARY.step.running,
          started_at: ago(150 * MINUTE),
          updated_at: ago(MINUTE),
        }),
        step({ name: 'restart', state: VOCABULARY.step.pending, started_at: null, updated_at: null }),
      ],
    });
    const [finding] = stuckRuns(runsSnapshot([r]), options, NOW);
    expect(finding).toMatchObject({
      severity: 'warning',
      summary: 'Update of shop-prod (production) has been running for 3h (step update_modules)',
      details: {
        run: '#100',
        running_for: '3h',
        step: 'update_modules',
        step_running_for: '2h 30m',
        since: ago(3 * HOUR),
      },
      since: ago(3 * HOUR),
      subject: { type: 'run', id: 100 },
    });
    expect(finding?.labels.step).toBeUndefined();
  });

  it("carries the watcher's progress", () => {
    const r = run({
      workflow: 'app_backup',
      action: 'backup',
      state: running,
      created_at: ago(5 * HOUR),
      watcher: { state: 'waiting', progress: 'archiving filestore', reason: null },
    });
    const [finding] = stuckRuns(runsSnapshot([r]), options, NOW);
    expect(finding?.summary).toBe(
      'Backup of shop-prod (production) has been running for 5h, waiting on the server: archiving filestore',
    );
    expect(finding?.details).toMatchObject({ watcher: 'waiting', progress: 'archiving filestore' });
  });

  it('keeps its fingerprint as the run moves from step to step', () => {
    const at = (name: string) =>
      run({ state: running, created_at: ago(3 * HOUR), steps: [step({ name, started_at: ago(HOUR) })] });
    const a = stuckRuns(runsSnapshot([at('pull_code')]), options, NOW);
    const b = stuckRuns(runsSnapshot([at('restart')]), options, NOW + HOUR);
    expect(a.map((f) => f.fingerprint)).toEqual(b.map((f) => f.fingerprint));
    expect(a[0]?.labels).toEqual(b[0]?.labels);
  });
});
