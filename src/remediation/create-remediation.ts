/**
 * Builds the remediator from one running configuration: the factory the composition root calls
 * at start and at every reload (`RemediationFactory` in `src/app/remediation-hook.ts`).
 */
import type { ApiClient } from '../api/client.js';
import type { Logger } from '../lib/logger.js';
import type { Config } from '../config/load-config.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../server/metrics.js';
import type { Store } from '../state/store.js';
import { unfinishedAttempts } from './remediation-store.js';
import { createRemediator, type RemediationNotifier, type Remediator } from './remediator.js';

/** What {@link createRemediation} is built from (the composition root's `RemediationDeps`). */
export interface RemediationParts {
  config: Pick<Config, 'remediation' | 'checks'>;
  client: ApiClient;
  store: Store;
  notifier: RemediationNotifier;
  clock: Clock;
  logger: Logger;
  metrics?: Metrics;
}

/**
 * The remediator for a configuration, or undefined when there is nothing for it to do: no policy
 * and no attempt still being sent or followed. With policies but `enabled: false` it is built all
 * the same, so the audit says which alerts a policy would cover ("disabled") and runs started
 * before the switch-off are still followed to their outcome.
 */
export function createRemediation(parts: RemediationParts): Remediator | undefined {
  const { config, store } = parts;
  if (config.remediation.policies.length === 0 && unfinishedAttempts(store) === 0) return undefined;
  return createRemediator({
    store,
    client: parts.client,
    settings: config.remediation,
    runStates: {
      failed: config.checks.failed_runs.failed_states,
      active: config.checks.stuck_runs.active_states,
      succeeded: config.checks.failed_runs.succeeded_states,
    },
    notifier: parts.notifier,
    clock: parts.clock,
    logger: parts.logger,
    pollIntervalMs: config.remediation.poll_interval,
    ...(parts.metrics ? { metrics: parts.metrics } : {}),
  });
}
