/**
 * Where a suspension holds: a whole policy, or a policy in one environment. `access_denied` is
 * graded by the app's environment (`change-answer.ts`), so one development app the token may not
 * change pauses its policy for development only, while staging goes on. Pure, so planning,
 * withdrawal, the alert and the audit all read a suspension the same way.
 */
import type { Labels } from '../lib/alert-vocabulary.js';

/**
 * How far a refusal that only a person can fix reaches: the whole policy, or its app's
 * environment (`SUSPEND_REACH` in `change-answer.ts` grades each refusal).
 */
export type SuspendReach = 'policy' | 'environment';

/** What a suspension covers. `environment` null: apps outside any environment, a scope of its own. */
export type SuspensionScope = { kind: 'policy' } | { kind: 'environment'; environment: string | null };

/** A suspended policy, or a policy suspended in one environment. */
export interface Suspension {
  policy: string;
  action: string;
  code: string;
  message: string;
  at: number;
  scope: SuspensionScope;
}

/** The environment of the app an alert (or an attempt planned from it) is about; null: outside any. */
export function environmentOf(labels: Pick<Labels, 'environment_type'>): string | null {
  return labels.environment_type ?? null;
}

/** The scope a refusal of this reach suspends, for the app these labels describe. */
export function scopeOf(reach: SuspendReach, labels: Pick<Labels, 'environment_type'>): SuspensionScope {
  return reach === 'policy' ? { kind: 'policy' } : { kind: 'environment', environment: environmentOf(labels) };
}

/**
 * The suspension that stops a policy on an app of `environment`, or undefined: the whole
 * policy's when there is one (it says more), else that environment's.
 */
export function suspensionCovering(
  suspensions: readonly Suspension[],
  policy: string,
  environment: string | null,
): Suspension | undefined {
  const own = suspensions.filter((s) => s.policy === policy);
  return (
    own.find((s) => s.scope.kind === 'policy') ??
    own.find((s) => s.scope.kind === 'environment' && s.scope.environment === environment)
  );
}

/** "development", "apps outside any environment", or "every environment" for a whole policy. */
export function scopeText(scope: SuspensionScope): string {
  if (scope.kind === 'policy') return 'every environment';
  return scope.environment ?? 'apps outside any environment';
}

/** What a suspension stops, for the audit: "paused for development", "suspended in every environment". */
export function suspensionText(scope: SuspensionScope): string {
  return scope.kind === 'policy' ? 'suspended in every environment' : `paused for ${scopeText(scope)}`;
}
