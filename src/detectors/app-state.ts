/**
 * app_state: an app in a state the config calls bad (`checks.app_state.bad_states`; by default the
 * simulator's `error` and `stopped`): its users are not being served until someone acts.
 *
 * Read from the backups job's snapshot, which already holds every app of `apps.list` with its
 * state: no request of its own. (The maintenance job holds the state too, but reads every app with
 * `apps.get`; tying a cheap check to the costliest job would keep that job running for it.) One
 * finding per app, for as long as its state is bad, whichever bad word it moves through; the app
 * back in a good state resolves it.
 *
 * The API says an app's state, not since when: `since` is left unknown. Its `server` label lets the
 * notify stage's `bad_servers` inhibition hold it under the alert of a server in a bad state.
 */
import type { BackupsSnapshot } from '../collectors/snapshot.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { badStatesParts, type BadStatesConfig } from './bad-states.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import { productionCritical } from './environment-severity.js';
import type { Detection } from './finding.js';
import { factsFrom } from './presentation.js';
import { toIso } from '../lib/parse-time.js';

/** The app_state check. */
export const appStateCheck = defineCheck({
  name: 'app_state',
  job: 'backups',
  ...badStatesParts('app', 'App states that mean the app is not serving its users.'),
  detect: appState,
  relevant: ({ app }, options) => options.bad_states.includes(app.state),
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'app', snapshot.apps, (app) => `the app is ${app.state} now`),
  presentation: {
    noun: ['app in a bad state', 'apps in a bad state'],
    facts: factsFrom(['state']),
    brief: (d) => (d.state ? `state ${d.state}` : null),
    nextStep: () => 'Open the app: read its log for why it stopped, then start it again.',
  },
});

/** Finds every app whose state is one of `bad_states`. */
export function appState(snapshot: BackupsSnapshot, options: BadStatesConfig): Detection<'app_state'>[] {
  const findings: Detection<'app_state'>[] = [];
  for (const app of snapshot.apps) {
    if (!options.bad_states.includes(app.state)) continue;
    const { name } = appContext(app);
    const updated = toIso(app.updated_at);
    findings.push({
      ...appFinding('app_state', app, productionCritical(app.environment_type)),
      summary: `App ${name} is ${app.state}`,
      // `updated_at`: not shown, the time its time to alert counts from (`notify/time-to-alert.ts`).
      details: { app: name, state: app.state, ...(updated ? { updated_at: updated } : {}) },
      since: null,
    });
  }
  return findings;
}
