/**
 * What a failed run's `runs.get` tells an on-call engineer beyond its list item, decided without
 * I/O: the failed step and why, and its watcher's state, progress or reason. Read after the cycle
 * that announced the run from its list item (announce first, enrich after), and shown with the
 * alert as its log and restore point are.
 */
import type { Run } from '../api/schemas.js';
import type { Fact } from '../lib/alert-vocabulary.js';
import { failedStep } from '../detectors/run-lineage.js';

/**
 * The facts of a run's detail. The failed step is the last one carrying a `reason` (the reference
 * gives `reason` only as "why a step failed"), as the failed_runs finding finds it.
 */
export function runDetailFacts(run: Run): Fact[] {
  const facts: Fact[] = [];
  const step = failedStep(run);
  if (step) facts.push({ label: 'Failed step', value: `${step.name}: ${step.reason ?? ''}`.trim() });
  const watcher = run.watcher;
  if (watcher) {
    const why = watcher.reason ?? watcher.progress;
    facts.push({ label: 'Watcher', value: why ? `${watcher.state}: ${why}` : watcher.state });
  }
  return facts;
}
