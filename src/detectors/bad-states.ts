import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import type { z } from 'zod';
import { BAD_APP_STATES, BAD_SERVER_STATES, OTHER_APP_STATES, OTHER_SERVER_STATES } from '../config/state-words.js';

/**
 * The section of a check of records in a state the config calls bad (app_state, servers), as
 * parsed: the detector's options. Severity: critical in production, warning elsewhere (by the apps
 * on a server).
 */
export type BadStatesConfig = z.output<ReturnType<typeof badStatesParts>['config']>;

/** Per record whose state such a check reads: its name in descriptions and its default state lists. */
const RECORDS = {
  app: { noun: 'App', bad: BAD_APP_STATES, other: OTHER_APP_STATES },
  server: { noun: 'Server', bad: BAD_SERVER_STATES, other: OTHER_SERVER_STATES },
} as const;

/**
 * The config and state lists of a check of records in a bad state: its `bad_states`
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
    stateLists: { record, fields: ['bad_states', 'other_states'] as const },
  };
}
