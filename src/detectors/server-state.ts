/**
 * servers: a server in a bad state (error, unreachable, stopped: `checks.servers.bad_states`).
 *
 * Every app on such a server fails its own checks at once (URLs down, runs failing), for one cause.
 * This finding names the cause; its `server` label is the server's NAME, which is what the other
 * detectors put in the `server` label of an app's findings (`AppLabels.server`), so the notify
 * stage's `bad_servers` inhibition holds those app alerts under this one while it fires.
 *
 * The API says a server's state, not since when: `since` is left unknown.
 */
import type { ServersSnapshot } from '../collectors/snapshot.js';
import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import { BAD_SERVER_STATES, OTHER_SERVER_STATES } from '../config/state-words.js';
import { buildLabels } from './build-labels.js';
import { defineCheck } from './define-check.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { factsFrom } from './presentation.js';

/** Options of the servers check (`checks.servers`). */
export interface ServerStateOptions {
  /** Server states that mean the server (and every app on it) is in trouble. */
  badStates: readonly string[];
}

/** The servers check. */
export const serversCheck = defineCheck({
  name: 'servers',
  job: 'servers',
  config: checkConfig({
    bad_states: stateListSchema(BAD_SERVER_STATES).describe('Server states that make its apps impossible to judge.'),
    other_states: otherStatesSchema(OTHER_SERVER_STATES, 'Server'),
  }),
  options: (own): ServerStateOptions | undefined => (own.enabled ? { badStates: own.bad_states } : undefined),
  detect: serverState,
  resolution: (alert, snapshot) => {
    const server = snapshot.servers.find((s) => alert.subject?.type === 'server' && s.id === alert.subject.id);
    return server ? `server ${server.name} is ${server.state} now` : 'the server is gone from the service';
  },
  stateLists: { record: 'server', fields: ['bad_states', 'other_states'] },
  presentation: {
    noun: ['server in a bad state', 'servers in a bad state'],
    facts: factsFrom([
      ['app_count', 'Apps'],
      ['provider', 'Provider'],
      ['region', 'Region'],
      ['public_ip', 'IP'],
    ]),
    nextStep: () =>
      "Check the server on the platform (power, network, disk): its apps' alerts are held until it is back.",
  },
});

/** Finds every server whose state is one of `badStates`; critical, since all its apps are affected. */
export function serverState(
  snapshot: ServersSnapshot,
  options: ServerStateOptions,
  _now: number,
): Detection<'servers'>[] {
  const bad = new Set(options.badStates);
  const findings: Detection<'servers'>[] = [];
  for (const server of snapshot.servers) {
    if (!bad.has(server.state)) continue;
    const apps = `${server.app_count} app${server.app_count === 1 ? '' : 's'}`;
    const details: Record<string, string> = {};
    if (server.provider) details.provider = server.provider;
    if (server.region) details.region = server.region;
    if (server.public_ip) details.public_ip = server.public_ip;
    details.app_count = String(server.app_count);
    findings.push({
      fingerprint: fingerprint('servers', 'server', server.id),
      check: 'servers',
      severity: 'critical',
      summary: `Server ${server.name} is ${server.state} (${apps} on it)`,
      details,
      labels: buildLabels('servers', { namespace: server.namespace, server: server.name }),
      url: null,
      since: null,
      subject: { type: 'server', id: server.id },
    });
  }
  return findings;
}
