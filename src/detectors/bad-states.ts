import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import { BAD_APP_STATES, BAD_SERVER_STATES, OTHER_APP_STATES, OTHER_SERVER_STATES } from '../config/state-words.js';

/**
 * Options of a check of records in a state the config calls bad (app_state, servers).
 * Severity: critical in production, warning elsewhere (by the apps on a server).
 */
export interface BadStatesOptions {
  /** The states that mean the record (and every app on a server) is in trouble. */
  badStates: readonly string[];
}

/** Per record whose state such a check reads: its name in descriptions and its default state lists. */
const RECORDS = {
  app: { noun: 'App', bad: BAD_APP_STATES, other: OTHER_APP_STATES },
  server: { noun: 'Server', bad: BAD_SERVER_STATES, other: OTHER_SERVER_STATES },
} as const;

/**
 * The config, options and state lists of a check of records in a bad state: its `bad_states`
 * (described by `description`) and `other_states`, by default the words the service says of a
 * `record`'s state that are bad and that are not. Spread into the check's `defineCheck`.
 */
export function badStatesParts(record: keyof typeof RECORDS, description: string) {
  const { noun, bad, other } = RECORDS[record];
  return {
    config: checkConfig({
      bad_states: stateListSchema(bad).describe(description),
      other_states: otherStatesSchema(other, noun),
    }),
    options: (own: { enabled: boolean; bad_states: string[] }): BadStatesOptions | undefined =>
      own.enabled ? { badStates: own.bad_states } : undefined,
    stateLists: { record, fields: ['bad_states', 'other_states'] as const },
  };
}
