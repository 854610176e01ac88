/** The `alert_context` table on both engines: one row per run asked about, pending until read, read once. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import { ContextStore } from '../../src/context/context-store.js';
import type { RunContextAsk } from '../../src/detectors/run-context.js';
import type { AlertContext } from '../../src/lib/alert-vocabulary.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';
import { finding } from '../alerts/fixtures.js';

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

  it("among one cycle's asks, gives the worst alert's first: a storm's production before its staging", () => {
    const store = state.open();
    const runs = new ContextStore(store);
    const alerts = [
      finding('f1', { severity: 'warning' }),
      finding('f2', { severity: 'critical' }),
      finding('f3', { severity: 'info' }),
      finding('f4', { severity: 'critical' }),
    ];
    store.transaction(() => {
      applyFindings(store, { job: 'runs', findings: alerts, now: T0 }, { forCycles: 1, repeatIntervalMs: 3_600_000 });
      for (const [i, a] of alerts.entries()) runs.ask(`run/${i + 1}`, a.fingerprint, ask(i + 1), T0);
    });
    runs.ask('run/0', 'f0', ask(0), T0 - 1); // an older ask (its alert gone) still comes first
    expect(runs.pending(10).map((r) => r.subject)).toEqual(['run/0', 'run/2', 'run/4', 'run/1', 'run/3']);
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
