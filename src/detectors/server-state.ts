/**
 * servers: a server in a bad state (error, unreachable, stopped: `checks.servers.bad_states`).
 *
 * Every app on such a server fails its own checks at once (URLs down, runs failing), for one cause.
 * This finding names the cause; its `server` label is the server's NAME, which is what the other
 * detectors put in the `server` label of an app's findings (`AppLabels.server`), so the notify
 * stage's `bad_servers` inhibition holds those app alerts under this one while it fires.
 *
 * It pages like its apps: it carries the most severe environment type of the apps on it (its
 * `environment_type` label: production over staging over development), so a route or mention for
 * production takes it, and the severity an app down there has (app_state's: critical in
 * production, warning elsewhere; a warning with no app on it). When the apps on it could not be
 * listed (the token may not), it stays critical, with no environment: better to page too many than
 * to hold a production outage under a warning.
 *
 * The API says a server's state, not since when: `since` is left unknown.
 */
import { environmentTypeSchema, type EnvironmentType } from '../api/schemas.js';
import type { ServersSnapshot } from '../collectors/snapshot.js';
import type { Severity } from '../lib/alert-vocabulary.js';
import { badStatesParts, type BadStatesConfig } from './bad-states.js';
import { knownValues } from './build-labels.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import { recordFinding } from './record-finding.js';
import { productionCritical } from './environment-severity.js';
import type { Detection } from './finding.js';
import { factsFrom } from './presentation.js';

/** The servers check. */
export const serversCheck = defineCheck({
  name: 'servers',
  job: 'servers',
  ...badStatesParts('server', 'Server states that make its apps impossible to judge.'),
  detect: serverState,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'server', snapshot.servers, (server) => `server ${server.name} is ${server.state} now`),
  presentation: {
    noun: ['server in a bad state', 'servers in a bad state'],
    facts: factsFrom([
      ['app_count', 'Apps'],
      ['environments', 'Apps by environment'],
      'provider',
      'region',
      ['public_ip', 'IP'],
    ]),
    nextStep: () =>
      "Check the server on the platform (power, network, disk): its apps' alerts are held until it is back.",
  },
});

/** Environment types, most severe first: the one a server's alert carries is the first its apps have. */
const ENVIRONMENTS_BY_WEIGHT: readonly EnvironmentType[] = environmentTypeSchema.options;

/** Finds every server whose state is one of `bad_states`, as severe as the apps on it. */
export function serverState(snapshot: ServersSnapshot, options: BadStatesConfig): Detection<'servers'>[] {
  const bad = new Set(options.bad_states);
  const findings: Detection<'servers'>[] = [];
  for (const server of snapshot.servers) {
    if (!bad.has(server.state)) continue;
    const apps = `${server.app_count} app${server.app_count === 1 ? '' : 's'}`;
    const { provider, region, public_ip } = server;
    const details = knownValues({ provider, region, public_ip, app_count: server.app_count });
    // The apps on it: their environments, none (no app), or unknown (not listed).
    const environments = snapshot.appEnvironments.get(server.id) ?? (server.app_count === 0 ? [] : undefined);
    let severity: Severity = 'critical';
    let environment: EnvironmentType | undefined;
    let inProduction = '';
    if (environments) {
      environment = ENVIRONMENTS_BY_WEIGHT.find((type) => environments.includes(type));
      // As severe as its most severe app: the environment it carries (none: no app, a warning).
      severity = productionCritical(environment);
      const counts = countBy(environments);
      if (counts.length > 0) details.environments = counts.map(([type, n]) => `${type} ${n}`).join(', ');
      const production = environments.filter((type) => type === 'production').length;
      if (production > 0) inProduction = `, ${production} in production`;
    } else if (snapshot.appsUnread) {
      details.environments = `unknown (${snapshot.appsUnread})`;
    }
    const labels = { namespace: server.namespace, server: server.name, environment_type: environment };
    findings.push({
      ...recordFinding('servers', { type: 'server', id: server.id }, labels, null),
      severity,
      summary: `Server ${server.name} is ${server.state} (${apps} on it${inProduction})`,
      details,
      since: null,
    });
  }
  return findings;
}

/** How many apps per environment type, most severe first; apps outside any environment as `none`. */
function countBy(environments: readonly (EnvironmentType | null)[]): [string, number][] {
  return [...ENVIRONMENTS_BY_WEIGHT, null]
    .map((type): [string, number] => [type ?? 'none', environments.filter((e) => e === type).length])
    .filter(([, n]) => n > 0);
}
