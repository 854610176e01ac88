/** The `alert_context` table on both engines: one row per run asked about, pending until read, read once. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContextStore } from '../../src/context/context-store.js';
import type { RunContextAsk } from '../../src/detectors/run-context.js';
import type { AlertContext } from '../../src/lib/alert-vocabulary.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

const T0 = Date.UTC(2026, 10, 2, 12);
const ask = (runId: number): RunContextAsk => ({ runId, appId: 7, workflow: 'setup', action: 'update', at: null });
const CONTEXT: AlertContext = { facts: [{ label: 'Restore point', value: 'kept' }], log: null, notes: ['a note'] };

describe.each(STATE_BACKENDS)('the context store on $name', (backend) => {
  let state: TestState;
  let contexts: ContextStore;
  beforeEach(() => {
    state = backend.fresh();
    contexts = new ContextStore(state.open());
  });
  afterEach(() => state.cleanup());

  it('records an ask once per run: a second alert of the same run asks nothing new', () => {
    expect(contexts.ask('run/1', 'failed_runs/run/1', ask(1), T0)).toBe(true);
    expect(contexts.ask('run/1', 'other/run/1', ask(1), T0 + 1)).toBe(false);
    expect(contexts.get('run/1')).toEqual({
      subject: 'run/1',
      fingerprint: 'failed_runs/run/1',
      ask: ask(1),
      status: 'pending',
      context: null,
      requestedAt: T0,
      readAt: null,
    });
  });

  it('gives pending asks oldest first, at most as many as asked', () => {
    contexts.ask('run/3', 'f3', ask(3), T0 + 2);
    contexts.ask('run/1', 'f1', ask(1), T0);
    contexts.ask('run/2', 'f2', ask(2), T0 + 1);
    expect(contexts.pending(2).map((r) => r.subject)).toEqual(['run/1', 'run/2']);
  });

  it('stores what was read once: a row already ready keeps its first context', () => {
    contexts.ask('run/1', 'f1', ask(1), T0);
    contexts.ready('run/1', CONTEXT, T0 + 5);
    contexts.ready('run/1', { ...CONTEXT, notes: ['read again'] }, T0 + 9);
    expect(contexts.get('run/1')).toMatchObject({ status: 'ready', context: CONTEXT, readAt: T0 + 5 });
    expect(contexts.pending(10)).toEqual([]);
    expect(contexts.get('run/2')).toBeUndefined();
  });
});
