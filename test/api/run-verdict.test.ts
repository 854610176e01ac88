/** The one verdict on a run, by table: the watcher first (§3.2), then the state words; retrying its own (§3.1). */
import { describe, expect, it } from 'vitest';
import { runVerdict, type RunVerdict, type RunStateWords } from '../../src/api/run-verdict.js';
import type { Run } from '../../src/api/schemas.js';

const WORDS: RunStateWords = { failed: ['error'], active: ['queued', 'running'], succeeded: ['done'] };
const watcher = (state: NonNullable<Run['watcher']>['state']): Run['watcher'] => ({
  state,
  progress: null,
  reason: null,
});

describe('runVerdict', () => {
  it.each<[string, { state: string; retrying?: boolean }, Run['watcher'] | undefined, RunVerdict]>([
    ['an active word', { state: 'running' }, null, { kind: 'active', why: 'active_state' }],
    ['a failed word', { state: 'error' }, null, { kind: 'failed', why: 'failed_state' }],
    ['a failed word, retrying: not failed yet', { state: 'error', retrying: true }, null, { kind: 'retrying' }],
    [
      'retrying outside a failed word: the words decide',
      { state: 'running', retrying: true },
      null,
      { kind: 'active', why: 'active_state' },
    ],
    ['a succeeded word', { state: 'done' }, null, { kind: 'succeeded' }],
    ['a word in no list', { state: 'cancelled' }, null, { kind: 'other' }],
    ['no detail read (a list item)', { state: 'error' }, undefined, { kind: 'failed', why: 'failed_state' }],
    [
      'watcher waiting, whatever the state',
      { state: 'error' },
      watcher('waiting'),
      { kind: 'active', why: 'watcher_waiting' },
    ],
    [
      'watcher failed while the run says running',
      { state: 'running' },
      watcher('failed'),
      { kind: 'failed', why: 'watcher_failed' },
    ],
    ['watcher timeout', { state: 'running' }, watcher('timeout'), { kind: 'failed', why: 'watcher_failed' }],
    [
      'watcher stopped, even while retrying',
      { state: 'error', retrying: true },
      watcher('stopped'),
      { kind: 'failed', why: 'watcher_failed' },
    ],
    ['watcher completed: the state words decide', { state: 'done' }, watcher('completed'), { kind: 'succeeded' }],
    [
      'watcher completed, the run still running',
      { state: 'running' },
      watcher('completed'),
      { kind: 'active', why: 'active_state' },
    ],
  ])('%s', (_what, run, w, expected) => {
    expect(runVerdict({ retrying: false, ...run }, w, WORDS)).toEqual(expected);
  });

  it.each<[string, string, RunStateWords, RunVerdict['kind']]>([
    ['no failed words: an error is just another state', 'error', { active: ['running'] }, 'other'],
    ['no succeeded words: done is just another state', 'done', { failed: ['error'], active: ['running'] }, 'other'],
    ['the configured words, not the simulator’s', 'FAILED', { failed: ['FAILED'] }, 'failed'],
    ['the simulator’s word when the config has others', 'error', { failed: ['FAILED'] }, 'other'],
  ])('%s', (_what, state, words, kind) => {
    expect(runVerdict({ state, retrying: false }, null, words).kind).toBe(kind);
  });
});
