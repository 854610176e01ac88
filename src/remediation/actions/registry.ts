/**
 * Every remediation action, by the name policies use. One line per action.
 */
import type { PolicyConfig } from '../../config/config-schema.js';
import type { RemediationAction } from './action.js';
import { appsBackup } from './apps-backup.js';
import { runsRetry } from './runs-retry.js';

/** The actions, keyed by policy `action`. */
export const ACTIONS: {
  readonly [A in PolicyConfig['action']]: RemediationAction<Extract<PolicyConfig, { action: A }>>;
} = {
  'runs.retry': runsRetry,
  'apps.backup': appsBackup,
};

/** The action of a policy. */
export function actionOf<P extends PolicyConfig>(policy: P): RemediationAction<P> {
  return ACTIONS[policy.action] as unknown as RemediationAction<P>;
}
