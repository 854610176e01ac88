/**
 * Builds the remediator from one running configuration: the factory the composition root calls
 * at start and at every reload (the old one is stopped first).
 */
import { unfinishedAttempts } from './remediation-store.js';
import { Remediator, type RemediationParts } from './remediator.js';

/**
 * The remediator for a configuration, or undefined when there is nothing for it to do: no policy
 * and no attempt still being sent or followed. With policies but `enabled: false` it is built all
 * the same, so the audit says which alerts a policy would cover ("disabled") and runs started
 * before the switch-off are still followed to their outcome.
 */
export function createRemediation(parts: RemediationParts): Remediator | undefined {
  if (parts.config.remediation.policies.length === 0 && unfinishedAttempts(parts.store) === 0) return undefined;
  return new Remediator(parts);
}
