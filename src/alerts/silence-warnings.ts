import { CHECK_NAMES } from '../detectors/registry.js';
import { POLICY_LABELS } from '../config/policy-schema.js';
import { compileMatchers, formatMatcher, type LabelMatcher } from './matchers.js';

/** Known values listed in a warning at most; more are counted. */
const VALUES_SHOWN = 10;

/**
 * Why a new silence may mute nothing, one sentence per matcher that looks mistyped: a matcher that
 * must find a label (`=` or `=~` with a value) names a label no alert carries (`ap=shop`), or a
 * value no alert has (`app=shpo`). `known` is every label with its values among the alerts the
 * state file holds (`AlertStore.labelValues`); the labels remediation policies match on and the check
 * names count as known even before any alert has them, so a silence made ahead of time on a
 * well-known label is not doubted for its name. Warnings only: a silence for an alert that has not
 * come yet is legitimate, so it is made all the same.
 */
export function silenceWarnings(
  matchers: readonly LabelMatcher[],
  known: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const names = new Set<string>([...POLICY_LABELS, ...known.keys()]);
  const valuesOf = (name: string): string[] =>
    [...new Set([...(known.get(name) ?? []), ...(name === 'check' ? CHECK_NAMES : [])])].sort();
  const warnings: string[] = [];
  for (const m of matchers) {
    if ((m.op !== '=' && m.op !== '=~') || m.value === '') continue;
    if (!names.has(m.name)) {
      warnings.push(
        `no alert has a label "${m.name}" (labels: ${[...names].sort().join(', ')}), so ${formatMatcher(m)} mutes nothing until one does`,
      );
      continue;
    }
    const values = valuesOf(m.name);
    const matches = compileMatchers([m]);
    if (values.some((v) => matches({ [m.name]: v }))) continue;
    const listed =
      values.length === 0
        ? 'no alert has that label yet'
        : `values of ${m.name}: ${values.slice(0, VALUES_SHOWN).join(', ')}${values.length > VALUES_SHOWN ? `, and ${values.length - VALUES_SHOWN} more` : ''}`;
    warnings.push(`no alert so far matches ${formatMatcher(m)} (${listed}); check the spelling`);
  }
  return warnings;
}
