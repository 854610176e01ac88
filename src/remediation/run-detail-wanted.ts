/**
 * Which failed runs a remediation policy waits on for their detail: a policy that matches on the
 * failed step (`reason`, `step`) can only decide once the run has been read by id (`runs.get`),
 * which the runs collector bounds per cycle. It asks this to read those runs first, so a storm of
 * failures never leaves such a policy waiting cycle after cycle behind the bound.
 */
import { compileMatchers, matchersFromConfig, type LabelMatcher, type MatchableLabels } from '../alerts/matchers.js';
import { productionNotNamed, type CompiledPolicy } from './policy.js';

/** The labels a failed run's alert has only once its detail is read: the failed step and its reason. */
const DETAIL_LABELS: ReadonlySet<string> = new Set(['reason', 'step']);

/**
 * The labels a runs list item already says as the alert will (`detectors/run-context.ts`); the
 * others (the app's name and server, from the apps list) are unknown while the collector reads:
 * a matcher on them is taken as matching, so a run is never left waiting on a guess.
 */
const LIST_LABELS: ReadonlySet<string> = new Set([
  'check',
  'namespace',
  'project',
  'environment_type',
  'workflow',
  'action',
]);

/**
 * A test of a failed run's list labels (`check` included): true when an automatic policy that
 * matches on the failed step could act on its alert once the detail is read. Undefined when no
 * such policy is in force (remediation off, or no policy names `reason` or `step`): then nothing
 * is waited on.
 */
export function runDetailWanted(
  policies: readonly CompiledPolicy[],
  enabled: boolean,
): ((labels: MatchableLabels) => boolean) | undefined {
  if (!enabled) return undefined;
  const tests = policies.flatMap((policy) => {
    if (policy.action.recordType !== 'run' || !policy.config.automatic) return [];
    const matchers = matchersFromConfig({ match: policy.config.match, match_re: policy.config.match_re });
    if (!matchers.some((m) => DETAIL_LABELS.has(m.name))) return [];
    const known: LabelMatcher[] = matchers.filter((m) => LIST_LABELS.has(m.name));
    const byName = new Map(known.map((m) => [m.name, compileMatchers([m])]));
    return [
      (labels: MatchableLabels) => {
        // The production guard of `decidePolicy`: such a policy never acts there.
        if (productionNotNamed(policy, labels)) return false;
        // A label the list does not say (a run without a project) may still be said by its app.
        for (const [name, test] of byName) if (labels[name] !== undefined && !test(labels)) return false;
        return true;
      },
    ];
  });
  if (tests.length === 0) return undefined;
  return (labels) => tests.some((test) => test(labels));
}
