/**
 * installers: a marketplace service (an installer: a database, a cache, a workflow tool… the
 * platform runs beside the apps) in a bad state (`checks.installers.bad_states`, default the
 * simulator's `error`). A service stopped on purpose is not a fault, so `stopped` is not in the
 * default list.
 *
 * Read by the installers job from `installers.list`, the only answer that carries services. The
 * API gives a service no environment, so it is a warning wherever it runs. Its `server` label lets
 * the notify stage's `bad_servers` inhibition hold it under the alert of a server in a bad state,
 * and its `app` label (the app it serves, when it serves one) lets routes take it with that app.
 * One finding per service while its state is bad; the API says its state, not since when.
 */
import type { InstallersSnapshot } from '../collectors/snapshot.js';
import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import { BAD_INSTALLER_STATES, OTHER_INSTALLER_STATES } from '../config/state-words.js';
import { buildLabels } from './build-labels.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { factsFrom } from './presentation.js';

/** Options of the installers check (`checks.installers`). */
export interface InstallersOptions {
  /** Service states that mean the service is in trouble. */
  badStates: readonly string[];
}

/** The installers check. */
export const installersCheck = defineCheck({
  name: 'installers',
  job: 'installers',
  config: checkConfig({
    bad_states: stateListSchema(BAD_INSTALLER_STATES).describe(
      'Marketplace service (installer) states that mean the service is in trouble.',
    ),
    other_states: otherStatesSchema(OTHER_INSTALLER_STATES, 'Marketplace service'),
  }),
  options: (own): InstallersOptions | undefined => (own.enabled ? { badStates: own.bad_states } : undefined),
  detect: installers,
  resolution: (alert, snapshot) =>
    recordResolution(
      alert,
      'installer',
      snapshot.installers,
      'the service is gone from the platform',
      (found) => `the service is ${found.state} now`,
    ),
  stateLists: { record: 'installer', fields: ['bad_states', 'other_states'] },
  presentation: {
    noun: ['marketplace service in a bad state', 'marketplace services in a bad state'],
    facts: factsFrom([
      ['state', 'State'],
      ['type', 'Type'],
      ['app', 'App'],
      ['server', 'Server'],
    ]),
    brief: (d) => (d.state ? `state ${d.state}` : null),
    nextStep: () => 'Open the service on the platform for why it is in error, and restart it once that is fixed.',
  },
});

/** Finds every marketplace service whose state is one of `badStates`. */
export function installers(snapshot: InstallersSnapshot, options: InstallersOptions): Detection<'installers'>[] {
  const findings: Detection<'installers'>[] = [];
  for (const installer of snapshot.installers) {
    if (!options.badStates.includes(installer.state)) continue;
    const details: Record<string, string> = { state: installer.state, type: installer.type };
    if (installer.app) details.app = installer.app;
    if (installer.server) details.server = installer.server;
    findings.push({
      fingerprint: fingerprint('installers', 'installer', installer.id),
      check: 'installers',
      severity: 'warning',
      summary: `Marketplace service ${installer.name} (${installer.type}${installer.app ? ` of ${installer.app}` : ''}) is ${installer.state}`,
      details,
      labels: buildLabels('installers', {
        namespace: installer.namespace,
        app: installer.app,
        server: installer.server,
        installer: installer.name,
        type: installer.type,
      }),
      url: installer.url,
      since: null,
      subject: { type: 'installer', id: installer.id },
    });
  }
  return findings;
}
