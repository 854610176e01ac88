/**
 * `apps.restart`: restarts an app that is stopped or in error. Acts on `app_state` alerts about an
 * app (the app's state is one of `checks.app_state.bad_states`), and only while the state the alert
 * last saw is one of the policy's `states` (default the app states meaning stopped and error): a
 * restart does not help an app whose bad state is a failed deploy, say, that a user listed there.
 */
import { z } from 'zod';
import { policySchema } from '../../config/policy-schema.js';
import { STATE_WORDS } from '../../config/state-words.js';
import { subjectTarget, type RemediationAction } from './action.js';
import { appRunSince } from './app-run-since.js';

/** An `apps.restart` policy. */
const restartPolicySchema = policySchema('apps.restart', '30m', {
  states: z
    .array(z.string().min(1))
    .min(1)
    .default([STATE_WORDS.app.stopped, STATE_WORDS.app.error])
    .describe('The app states (as the app_state alert saw them) a restart is made in. Default stopped and error.'),
});

/** The apps.restart action. */
export const appsRestart: RemediationAction<z.output<typeof restartPolicySchema>> = {
  name: 'apps.restart',
  policy: restartPolicySchema,
  recordType: 'app',
  target: (alert) => subjectTarget(alert, 'app_state', 'app'),
  covers: (alert, policy) => policy.states.includes(alert.details.state ?? ''),
  body: () => ({}),
  send: (client, recordId, _body, options) => client.apps.restart(recordId, options),
  findStartedRun: (client, facts, signal) => appRunSince(client, facts, /restart/i, signal),
  words: {
    done: 'Restart started',
    succeeded: 'App restarted',
    failed: 'Restart failed',
    noun: 'Restart',
    request: 'Restart app',
  },
};
