import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import type { EnvironmentSeverity } from './environment-severity.js';

/** Options of a check of records in a state the config calls bad (app_state, servers). */
export interface BadStatesOptions {
  /** The states that mean the record (and every app on a server) is in trouble. */
  badStates: readonly string[];
  /** Severity per environment type (of the apps on a server); default critical in production, warning elsewhere. */
  severity?: Partial<EnvironmentSeverity>;
}

/**
 * The config, options and state lists of a check of records in a bad state: its `bad_states`
 * (default `bad`, described by `description`) and `other_states` (default `other`), the words the
 * service says of a `record`'s state. Spread into the check's `defineCheck`.
 */
export function badStatesParts(
  record: 'app' | 'server',
  defaults: { bad: readonly string[]; other: readonly string[] },
  description: string,
) {
  return {
    config: checkConfig({
      bad_states: stateListSchema(defaults.bad).describe(description),
      other_states: otherStatesSchema(defaults.other, record === 'app' ? 'App' : 'Server'),
    }),
    options: (own: { enabled: boolean; bad_states: string[] }): BadStatesOptions | undefined =>
      own.enabled ? { badStates: own.bad_states } : undefined,
    stateLists: { record, fields: ['bad_states', 'other_states'] as const },
  };
}
