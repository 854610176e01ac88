/** Judging a followed run with the configured state words. */
import { describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/schemas.js';
import { runProgress, type RunStates } from '../../src/remediation/run-progress.js';

const STATES: RunStates = { failed: ['error'], active: ['queued', 'running'], succeeded: ['done'] };

function run(over: Partial<Run> = {}): Run {
  return {
    id: 1,
    workflow: 'app_update',
    action: 'update',
    state: 'running',
    retrying: false,
    namespace: 'acme',
    record: 'shop',
    record_type: 'app',
    app_id: 1,
    project: 'Shop',
    environment_type: 'staging',
    created_at: null,
    updated_at: null,
    steps: [
      { name: 'pull_code', state: 'done', started_at: null, updated_at: null, reason: null },
      { name: 'restart', state: 'error', started_at: null, updated_at: null, reason: 'health check timed out' },
      { name: 'check', state: 'pending', started_at: null, updated_at: null, reason: null },
    ],
    watcher: null,
    ...over,
  };
}

describe('runProgress', () => {
  it.each([
    ['running', run(), { kind: 'going', why: 'active_state' }],
    ['queued', run({ state: 'queued' }), { kind: 'going', why: 'active_state' }],
    ['done', run({ state: 'done' }), { kind: 'succeeded' }],
    [
      'error: the step with a reason',
      run({ state: 'error' }),
      { kind: 'run_failed', step: 'restart', reason: 'health check timed out', watcher: null },
    ],
    ['error but retrying', run({ state: 'error', retrying: true }), { kind: 'going', why: 'retrying' }],
    [
      'watcher waiting',
      run({ state: 'running', watcher: { state: 'waiting', progress: 'dumping', reason: null } }),
      { kind: 'going', why: 'watcher_waiting' },
    ],
    [
      'watcher timeout',
      run({ state: 'running', watcher: { state: 'timeout', progress: null, reason: 'no report in 2 h' } }),
      { kind: 'run_failed', step: null, reason: 'no report in 2 h', watcher: 'timeout' },
    ],
    [
      'watcher completed, run done',
      run({ state: 'done', watcher: { state: 'completed', progress: null, reason: null } }),
      { kind: 'succeeded' },
    ],
    ['a state in no list', run({ state: 'cancelled' }), { kind: 'run_ended', state: 'cancelled' }],
  ])('%s', (_what, r, expected) => {
    expect(runProgress(r, STATES)).toEqual(expected);
  });

  it('uses the configured words, not the simulator’s', () => {
    expect(runProgress(run({ state: 'FAILED' }), { failed: ['FAILED'], active: [], succeeded: ['OK'] })).toMatchObject({
      kind: 'run_failed',
    });
    expect(runProgress(run({ state: 'error' }), { failed: ['FAILED'], active: [], succeeded: ['OK'] })).toEqual({
      kind: 'run_ended',
      state: 'error',
    });
  });
});
