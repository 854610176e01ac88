/**
 * Policy evaluation: which open alerts a policy covers, and, for one alert, whether to act now,
 * with a named reason when not. Pure: the remediator gathers the facts (history of attempts,
 * suspensions, the hourly count) and carries the decision out.
 */
import type { AlertRow } from '../alerts/alert-store.js';
import { compileMatchers, matchersFromConfig, type CompiledMatchers } from '../alerts/matchers.js';
import type { ParsedConfig } from '../config/config-schema.js';
import type { ActionSkipReason, ActionTarget, RemediationAction } from './actions/action.js';
import { actionOf, type PolicyConfig } from './actions/registry.js';
import type { SuspensionScope } from './suspension.js';

/** The `remediation` section of the config, as its schema parses it. */
export type RemediationSettings = ParsedConfig['remediation'];

/** A policy ready to evaluate: its matchers compiled once. */
export interface CompiledPolicy {
  config: PolicyConfig;
  action: RemediationAction;
  matches: CompiledMatchers;
  /** `match.environment_type` names production (a string or a list containing it). */
  namesProduction: boolean;
  /** The policy's own dry_run, else the section's. */
  dryRun: boolean;
}

/**
 * Whether an alert's labels are production's and the policy does not name production: such a policy
 * never touches production, however its matchers read (a catch-all, a regex that happens to match).
 */
export function productionNotNamed(policy: CompiledPolicy, labels: { environment_type?: string }): boolean {
  return labels.environment_type === 'production' && !policy.namesProduction;
}

/** Why a policy does not act on an alert now. */
export type SkipReason =
  /** `remediation.enabled` is false. */
  | 'disabled'
  /** A refusal only a person can fix suspended the policy, in every environment. */
  | 'policy_suspended'
  /** `access_denied` paused the policy for the environment of this alert's app. */
  | 'environment_paused'
  /** The alert is about production and the policy does not name production explicitly. */
  | 'production_not_named'
  /** The policy acts only when a person asks (`automatic: false`), and nobody has. */
  | 'not_automatic'
  /** The service said this record cannot be changed this way (not_retryable, not_found), this alert life. */
  | 'stopped'
  /** An attempt on this record is being sent or followed. */
  | 'attempt_in_progress'
  /** The policy's `max_attempts` on this record are used up. */
  | 'max_attempts_reached'
  /** The last attempt on this record was less than `backoff` ago. */
  | 'backoff_pending'
  /** A silence in force mutes the alert, and `remediation.during_silence` is `hold`: nobody asked. */
  | 'silenced'
  /** `remediation.max_actions_per_hour` reached. */
  | 'hourly_limit'
  | ActionSkipReason;

/** One policy's decision about one alert. */
export type PolicyDecision =
  { kind: 'act'; attempt: number } | { kind: 'dry_run'; attempt: number } | { kind: 'skip'; reason: SkipReason };

/** What is known about a policy's earlier attempts on a record. */
export interface RecordHistory {
  /** Highest attempt number so far (0: none); the next attempt is this + 1. */
  lastAttempt: number;
  /** Attempts whose change was taken or may have been: what max_attempts counts. */
  counted: number;
  /** An attempt is planned or followed right now. */
  inFlight: boolean;
  /** Earliest time of the next attempt (the end of the last one on the record, by any policy, plus its backoff); null: no wait. */
  nextAllowedAt: number | null;
  /** The service said stop (not_retryable…) in this alert life. */
  stopped: boolean;
}

/** The facts of one evaluation besides the alert and its history. */
export interface DecisionContext {
  enabled: boolean;
  /** The suspension that holds for this alert: the whole policy's, its environment's, or none. */
  suspended: SuspensionScope['kind'] | null;
  /** Non-dry-run attempts planned in the last hour, this cycle's included. */
  actionsLastHour: number;
  maxActionsPerHour: number;
  now: number;
  /** A person asked for the action now (the Slack app's Retry now): a policy with `automatic: false` may act. */
  requested?: boolean;
  /** A silence in force mutes the alert and holds the automatic moves on it (`remediation.during_silence: hold`). */
  silenced?: boolean;
}

/**
 * Compiles the configured policies (matchers, production guard, dry run). Their matchers compile:
 * the config's schema has refused a regex RE2 does not take, at its key path.
 */
export function compilePolicies(settings: Pick<RemediationSettings, 'dry_run' | 'policies'>): CompiledPolicy[] {
  return settings.policies.map((config) => {
    const matches = compileMatchers(matchersFromConfig({ match: config.match, match_re: config.match_re }));
    const env = config.match.environment_type;
    const namesProduction = env === 'production' || (Array.isArray(env) && env.includes('production'));
    return { config, action: actionOf(config), matches, namesProduction, dryRun: config.dry_run ?? settings.dry_run };
  });
}

/**
 * The record a policy would act on for this alert, or null when the policy does not cover it:
 * not firing, not the action's kind of alert, or its labels do not match. The failed step's
 * `reason` (from the alert's details) is matched like a label, so `match_re: { reason: "disk full.*" }` works.
 */
export function policyTarget(policy: CompiledPolicy, alert: AlertRow): ActionTarget | null {
  if (alert.status !== 'firing') return null;
  const target = policy.action.target(alert);
  if (!target || policy.action.covers?.(alert, policy.config) === false) return null;
  const labels = { ...alert.labels, reason: alert.details.reason ?? alert.labels.reason };
  return policy.matches(labels) ? target : null;
}

/**
 * The first policy (in config order) a person may ask to act on this alert: remediation is on, the
 * policy covers the alert (`policyTarget`), and production is named where the alert is production.
 * Whether it acts when asked is still {@link decidePolicy}'s (attempts, backoff, dry run, …).
 */
export function requestablePolicy(
  policies: readonly CompiledPolicy[],
  enabled: boolean,
  alert: AlertRow,
): { policy: CompiledPolicy; target: ActionTarget } | undefined {
  if (!enabled) return undefined;
  for (const policy of policies) {
    const target = policyTarget(policy, alert);
    if (target && !productionNotNamed(policy, alert.labels)) return { policy, target };
  }
  return undefined;
}

/** Decides one covered alert. Checks run in a fixed order, so the reason named is the first that holds. */
export function decidePolicy(
  policy: CompiledPolicy,
  alert: AlertRow,
  history: RecordHistory,
  ctx: DecisionContext,
): PolicyDecision {
  const skip = (reason: SkipReason): PolicyDecision => ({ kind: 'skip', reason });
  if (!ctx.enabled) return skip('disabled');
  if (ctx.suspended === 'policy') return skip('policy_suspended');
  if (ctx.suspended === 'environment') return skip('environment_paused');
  // The guard is on the alert's labels, not on the matchers: a catch-all policy, or a regex that
  // happens to match "production", never reaches production.
  if (productionNotNamed(policy, alert.labels)) return skip('production_not_named');
  // Leave maintenance is a button only, whatever its policy says (`onRequestOnly`).
  if ((!policy.config.automatic || policy.action.onRequestOnly) && !ctx.requested) return skip('not_automatic');
  if (history.stopped) return skip('stopped');
  if (history.inFlight) return skip('attempt_in_progress');
  if (history.counted >= policy.config.max_attempts) return skip('max_attempts_reached');
  if (history.nextAllowedAt !== null && ctx.now < history.nextAllowedAt) return skip('backoff_pending');
  const own = policy.action.precheck?.(alert, policy.config);
  if (own) return skip(own);
  // Last of the skips, so "held" is said only where the silence is what stops the move; a person's
  // request is a person deciding, and is not held.
  if (ctx.silenced && !ctx.requested) return skip('silenced');
  const attempt = history.lastAttempt + 1;
  if (policy.dryRun) return { kind: 'dry_run', attempt };
  if (ctx.actionsLastHour >= ctx.maxActionsPerHour) return skip('hourly_limit');
  return { kind: 'act', attempt };
}
