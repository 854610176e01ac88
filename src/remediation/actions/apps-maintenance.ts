/**
 * `apps.maintenance` with `on: false`: takes an app out of maintenance, on a `maintenance` alert
 * (an app left in maintenance longer than `checks.maintenance.max_duration`). Only ever when a
 * person asks (the Leave maintenance button): the watchdog cannot know whether the work the app was
 * put in maintenance for is over, and taking it out too soon shows users a half-changed app. So its
 * policies refuse `automatic: true` with a message saying so, and the remediator never makes it by
 * itself even if one got through (`onRequestOnly`).
 */
import { z } from 'zod';
import { policySchema } from '../../config/policy-schema.js';
import { subjectTarget, type RemediationAction } from './action.js';
import { appRunSince } from './app-run-since.js';

/** Why a Leave maintenance policy cannot be automatic, as `validate` says it. */
export const MAINTENANCE_NEVER_AUTOMATIC =
  'apps.maintenance is never made automatically: only a person can tell that the work on the app is over, so it is a button only (Leave maintenance); remove automatic or set it to false';

/** An `apps.maintenance` policy: always on request. */
const maintenancePolicySchema = policySchema('apps.maintenance', '30m', {
  automatic: z
    .literal(false, { error: MAINTENANCE_NEVER_AUTOMATIC })
    .default(false)
    .describe('Always false: Leave maintenance is offered as a button, never made by itself.'),
});

/** The apps.maintenance (off) action. */
export const appsMaintenance: RemediationAction<z.output<typeof maintenancePolicySchema>> = {
  name: 'apps.maintenance',
  policy: maintenancePolicySchema,
  recordType: 'app',
  onRequestOnly: true,
  target: (alert) => subjectTarget(alert, 'maintenance', 'app'),
  body: () => ({ on: false }),
  send: (client, recordId, body, options) => client.apps.maintenance(recordId, body as { on: boolean }, options),
  findStartedRun: (client, facts, signal) => appRunSince(client, facts, /maintenance/i, signal),
  words: {
    done: 'Leaving maintenance',
    succeeded: 'Out of maintenance',
    failed: 'Leaving maintenance failed',
    noun: 'Leave maintenance',
    request: 'Leave maintenance',
  },
};
