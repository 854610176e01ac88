/**
 * installers: a marketplace service (an installer: a database, a cache, a workflow tool… the
 * platform runs beside the apps) in a bad state (`checks.installers.bad_states`, default the
 * simulator's `error`), or stopped (`stopped_states`, default `stopped`) for longer than
 * `stopped_for` (default 1h). A stop on purpose is usually brief (a restart, a change of plan); a
 * service stopped for an hour is one the app it serves has been without for an hour, whoever
 * stopped it. The API says the state, not since when, so a stopped service is reported at once with
 * `holdForMs` = `stopped_for` and the lifecycle fires it only once it has seen it stopped that long
 * (as maintenance does). `stopped_states: []` leaves stopped services alone, as before.
 *
 * Read by the installers job from `installers.list`, the only answer that carries services. The
 * API gives a service no environment, so it is a warning wherever it runs. Its `server` label lets
 * the notify stage's `bad_servers` inhibition hold it under the alert of a server in a bad state,
 * and its `app` label (the app it serves, when it serves one) lets routes take it with that app.
 * One finding per service while its state is bad; the API says its state, not since when.
 */
import type { z } from 'zod';
import type { InstallersSnapshot } from '../collectors/snapshot.js';
import { checkConfig, otherStatesSchema, stateListSchema, wordListSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { formatDuration } from '../lib/format-duration.js';
import { BAD_INSTALLER_STATES, OTHER_INSTALLER_STATES, STOPPED_INSTALLER_STATES } from '../config/state-words.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import { recordFinding } from './record-finding.js';
import { knownValues } from './build-labels.js';
import { heldFromFirstSighting, type Detection } from './finding.js';
import { factsFrom } from './presentation.js';

/** `checks.installers`. */
export const installersConfig = checkConfig({
  bad_states: stateListSchema(BAD_INSTALLER_STATES).describe(
    'Marketplace service (installer) states that mean the service is in trouble.',
  ),
  stopped_states: wordListSchema(STOPPED_INSTALLER_STATES).describe(
    'Marketplace service states in which a service is stopped: alerted once it has stayed stopped for stopped_for. Empty: stopped services are not alerted.',
  ),
  stopped_for: durationSchema
    .prefault('1h')
    .describe(
      'A marketplace service stopped longer than this is alerted (a restart or a brief stop on purpose is not).',
    ),
  other_states: otherStatesSchema(OTHER_INSTALLER_STATES, 'Marketplace service'),
});

/** The installers check. */
export const installersCheck = defineCheck({
  name: 'installers',
  job: 'installers',
  config: installersConfig,
  detect: installers,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'installer', snapshot.installers, (found) => `the service is ${found.state} now`),
  stateLists: { record: 'installer', fields: ['bad_states', 'stopped_states', 'other_states'] },
  presentation: {
    noun: ['marketplace service in a bad state', 'marketplace services in a bad state'],
    facts: factsFrom(['state', 'type', 'app', 'server', ['max_duration', 'Allowed stopped']]),
    brief: (d) => (d.state ? `state ${d.state}` : null),
    nextStep: ({ labels }) =>
      labels.problem === 'stopped'
        ? 'Start the service again, or, if it is no longer needed, remove it (and the app that uses it from it).'
        : 'Open the service on the platform for why it is in error, and restart it once that is fixed.',
  },
});

/** `checks.installers` as parsed: the detector's options. */
export type InstallersConfig = z.output<typeof installersConfig>;

/**
 * Finds every marketplace service whose state is one of `bad_states` (at once), or one of
 * `stopped_states` (held back by the lifecycle for `stopped_for`). One fingerprint per service, so a
 * stopped service that goes into error is the same alert.
 */
export function installers(snapshot: InstallersSnapshot, options: InstallersConfig): Detection<'installers'>[] {
  const findings: Detection<'installers'>[] = [];
  for (const installer of snapshot.installers) {
    const bad = options.bad_states.includes(installer.state);
    if (!bad && !options.stopped_states.includes(installer.state)) continue;
    const max = formatDuration(options.stopped_for);
    const { state, type, app, server } = installer;
    const details = { state, type, ...knownValues({ app, server, max_duration: bad ? null : max }) };
    const what = `Marketplace service ${installer.name} (${installer.type}${installer.app ? ` of ${installer.app}` : ''})`;
    const labels = {
      namespace: installer.namespace,
      app: installer.app,
      server: installer.server,
      installer: installer.name,
      type: installer.type,
      problem: bad ? null : 'stopped',
    };
    findings.push({
      ...recordFinding('installers', { type: 'installer', id: installer.id }, labels, installer.url),
      severity: 'warning',
      summary: bad ? `${what} is ${installer.state}` : `${what} has been ${installer.state} for more than ${max}`,
      details,
      since: null,
      ...(!bad && heldFromFirstSighting(options.stopped_for, 'checks.installers.stopped_for')),
    });
  }
  return findings;
}
