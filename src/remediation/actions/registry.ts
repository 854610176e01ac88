/**
 * Every remediation action. One line per action: the config's `remediation.policies` schema and
 * the action of a policy both follow from {@link ACTIONS}.
 */
import { z } from 'zod';
import type { RemediationAction } from './action.js';
import { appsBackup } from './apps-backup.js';
import { appsMaintenance } from './apps-maintenance.js';
import { appsRestart } from './apps-restart.js';
import { runsRetry } from './runs-retry.js';

/** The actions, in the order the docs list them. */
export const ACTIONS = [runsRetry, appsBackup, appsRestart, appsMaintenance] as const;

/** The policy type of each action, in {@link ACTIONS} order. */
type PolicySchemas<T extends readonly unknown[]> = {
  [K in keyof T]: T[K] extends RemediationAction<infer P> ? z.ZodType<P> : never;
};

/** One entry of `remediation.policies`: the schema of its action, chosen by `action`. */
export const policyConfigSchema = z.discriminatedUnion(
  'action',
  // Safe: each action's `policy` is a strict object schema with a literal `action` (policySchema).
  ACTIONS.map((a) => a.policy) as unknown as PolicySchemas<typeof ACTIONS> & [z.ZodObject, ...z.ZodObject[]],
);

/** A parsed policy of any action. */
export type PolicyConfig = z.output<typeof policyConfigSchema>;

/** The action of a policy. */
export function actionOf<P extends PolicyConfig>(policy: P): RemediationAction<P> {
  // Safe: ACTIONS holds one action per `action` literal, and the policy was parsed by its schema.
  return ACTIONS.find((a) => a.name === policy.action) as unknown as RemediationAction<P>;
}
