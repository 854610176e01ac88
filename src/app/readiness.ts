/**
 * What `/readyz` answers: every enabled job completed a cycle within twice its interval (a job off
 * for lack of a permission counts as ready: it is alerted on, and a restart would not fix it), and
 * the state file takes writes (and is still at its path). Among replicas (a PostgreSQL state), the leader answers that and
 * whether it still holds the lease; a follower, which runs no job, whether the state takes writes
 * (its console's) and it reaches the lease, so it is ready to take over. The request budget is
 * said as a check that never fails (`request_budget`), once the estate is counted.
 */
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { ReadinessCheck } from '../server/readiness-check.js';
import type { Store } from '../state/store.js';
import { describeError } from '../api/describe-error.js';
import type { SourceHealthStore } from '../alerts/source-health-store.js';
import type { ElectionStatus } from '../state/leader-election.js';
import { describeBudget, type RequestBudget } from './request-budget.js';
import type { Scheduler } from './scheduler.js';

/** What readiness is judged on. */
export interface ReadinessInputs {
  /** The enabled jobs. */
  jobs: Iterable<SnapshotJob>;
  /** Jobs switched off for lack of a permission, with the reason. */
  disabled: ReadonlyMap<string, string>;
  /**
   * The schedules and the request budget: the longest gap between two runs of a job (ms), as the
   * budget stretched it; the budget is said as a check of its own.
   */
  schedule: { scheduler: Pick<Scheduler, 'intervalMs'>; budget: Pick<RequestBudget, 'plan' | 'intervalMs'> };
  health: SourceHealthStore;
  store: Store;
  now: number;
  /** The leader election, among replicas; absent for one process (SQLite). */
  election?: ElectionStatus | undefined;
}

/**
 * The longest the checks wait for a PostgreSQL state, all statements together: a server that
 * hangs makes the answer "not ready" in that time, not a probe (and the rest of the daemon's main
 * thread) kept waiting for the whole statement timeout.
 */
export const READINESS_WAIT_MS = 2_000;

/**
 * One check per enabled job and one for the state file. Never throws: a judgement that fails is
 * one failed check that says why, for `/readyz` and the console's sources page alike.
 */
export function readinessChecks(inputs: ReadinessInputs): ReadinessCheck[] {
  try {
    return inputs.store.within(READINESS_WAIT_MS, () => checksOf(inputs));
  } catch (err) {
    return [{ check: 'readiness', ok: false, detail: `cannot judge readiness: ${describeError(err)}` }];
  }
}

function checksOf(inputs: ReadinessInputs): ReadinessCheck[] {
  const { now, election } = inputs;
  const checks: ReadinessCheck[] = [];
  if (election) checks.push({ check: 'leader', ok: election.reached, detail: election.detail });
  for (const job of election?.role === 'follower' ? [] : inputs.jobs) checks.push(jobCheck(inputs, job));
  const plan = election?.role === 'follower' ? undefined : inputs.schedule.budget.plan;
  // Said, never failing readiness: a budget that does not fit is the configuration's to change.
  if (plan) checks.push({ check: 'request_budget', ok: true, detail: describeBudget(plan) });
  try {
    inputs.store.transaction(() => inputs.store.setMeta('ready_probe_at', String(now)));
    const lost = inputs.store.lostFile();
    checks.push({ check: 'state', ok: !lost, detail: lost ? describeError(lost) : 'state file takes writes' });
  } catch (err) {
    checks.push({ check: 'state', ok: false, detail: describeError(err) });
  }
  return checks;
}

/** Whether `job` completed a cycle within twice its interval as the budget stretched it, or is off for a permission. */
function jobCheck(inputs: ReadinessInputs, job: SnapshotJob): ReadinessCheck {
  const check = `job:${job}`;
  const disabled = inputs.disabled.get(job);
  if (disabled !== undefined) return { check, ok: true, detail: `disabled: ${disabled}` };
  const { scheduler, budget } = inputs.schedule;
  const allowed = 2 * (budget.intervalMs(job, scheduler.intervalMs(job)) ?? 0);
  let last: number | null;
  try {
    last = inputs.health.get(job)?.lastSuccessAt ?? null;
  } catch (err) {
    // The state cannot be read (its server is down): not ready, said; never a failed request.
    return { check, ok: false, detail: `cannot read its last cycle: ${describeError(err)}` };
  }
  if (last === null) return { check, ok: false, detail: 'no complete cycle yet' };
  const age = inputs.now - last;
  return {
    check,
    ok: age <= allowed,
    detail: `last complete cycle ${Math.round(age / 1000)}s ago (allowed ${Math.round(allowed / 1000)}s)`,
  };
}
