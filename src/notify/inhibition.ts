/**
 * Inhibition: while a cause fires, the alerts that follow from it are held back and summarised
 * under it instead of paging once each (Alertmanager's inhibit rules, with the two causes this
 * watchdog knows built in):
 *
 * - `bad_servers`: a firing `servers` alert for server S (labels `{ check: 'servers', server: S }`)
 *   holds every other alert whose `server` label is S: every app on that server.
 * - `app_maintenance`: an app in maintenance (an open `maintenance` alert, pending or firing: the
 *   maintenance check reports every app in maintenance at once and fires only after its
 *   `max_duration`) or whose version upgrade waits in standby (an open `upgrades` alert of problem
 *   `standby`, for the app upgraded and its new app) holds the alerts about its URLs (`url_checks`,
 *   `certificates`): users see the maintenance page, or the upgrade holds the app, on purpose, so
 *   what the URLs say then is not news. No summary is sent: the state is deliberate, and the held
 *   alerts are delivered if they still fire once it is over.
 * - `app_down`: a firing `app_state` alert (the app is stopped or in error) holds the alerts about
 *   its URLs: one cause, one page, the URL alerts summarised under it.
 * - `api_unreadable`: when the API cannot be read, each job reports its own "cannot read X"
 *   (`{ check: 'watchdog', source: X }`), one cause showing up several times. The first of them to
 *   fire (then the lowest fingerprint) is the cause; the later ones are held under it, so an API
 *   outage is one message, not one per job (and no summary: the cause's own message says the API
 *   cannot be read). Nothing else needs holding: a job that cannot read its
 *   source writes no events at all (an incomplete snapshot never resolves or repeats anything).
 *
 * Held rows are decided again every delivery round: when the cause clears, the held alerts still
 * firing are delivered, and those that resolved meanwhile resolve quietly.
 */
import type { AlertRow } from '../alerts/alert-store.js';
import type { Labels } from '../lib/alert-vocabulary.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { CheckName } from '../detectors/registry.js';
import type { InhibitSettings } from './notify-settings.js';

/** The rule that holds an alert back. */
export type InhibitRule = 'bad_servers' | 'app_maintenance' | 'app_down' | 'api_unreadable';

/** An open alert as the inhibitor reads it, any labels; an upgrade's details name its new app (`new_app`). */
export type InhibitionSource = Pick<AlertRow, 'fingerprint' | 'status' | 'summary' | 'details' | 'firedAt'> & {
  labels: Labels;
};

/** Why an alert is held back: the rule and the firing alert that causes it. */
export interface InhibitionCause {
  rule: InhibitRule;
  fingerprint: string;
  summary: string;
}

/** Answers "is this alert held back, and by what?" for one moment's set of firing alerts. */
export class Inhibitor {
  readonly #badServers = new Map<string, InhibitionCause>();
  /**
   * The apps whose URL alerts are held, and why: by namespace (`''` for none), then app name, as the
   * labels of every finding about an app (or its URLs) name it.
   */
  readonly #appsHeld = new Map<string, Map<string, InhibitionCause>>();
  readonly #apiCause: InhibitionCause | undefined;

  /**
   * `open`: the alerts open now. Only a firing alert is a cause, but for `app_maintenance`, whose
   * pending maintenance or standby alert is the evidence that the app is out of service on purpose.
   */
  constructor(settings: InhibitSettings, open: readonly InhibitionSource[]) {
    const firing = open.filter((a) => a.status === 'firing');
    if (settings.bad_servers) {
      for (const a of firing) {
        const server = a.labels.server;
        if (a.labels.check === SERVERS_CHECK && server && !this.#badServers.has(server)) {
          this.#badServers.set(server, { rule: 'bad_servers', fingerprint: a.fingerprint, summary: a.summary });
        }
      }
    }
    // Maintenance first: an app stopped for its maintenance is held for the maintenance, on purpose.
    if (settings.app_maintenance) {
      for (const a of open) {
        const app = a.labels.app;
        if (a.labels.check === 'maintenance' && app) {
          this.#holdApp(a, app, 'app_maintenance', `${app} is in maintenance mode`);
        } else if (a.labels.check === 'upgrades' && a.labels.problem === 'standby' && app) {
          this.#holdApp(a, app, 'app_maintenance', `${app} is in upgrade standby`);
          const next = a.details?.new_app;
          if (next) this.#holdApp(a, next, 'app_maintenance', `${next} is the new app of ${app}'s upgrade in standby`);
        }
      }
    }
    if (settings.app_down) {
      for (const a of firing) {
        if (a.labels.check === 'app_state' && a.labels.app) this.#holdApp(a, a.labels.app, 'app_down', a.summary);
      }
    }
    if (settings.api_unreadable) {
      const first = firing
        .filter(isCannotRead)
        .sort((a, b) => (a.firedAt ?? 0) - (b.firedAt ?? 0) || a.fingerprint.localeCompare(b.fingerprint))[0];
      this.#apiCause = first && { rule: 'api_unreadable', fingerprint: first.fingerprint, summary: first.summary };
    }
  }

  /**
   * The cause holding this alert back, or undefined when it may be announced. Asked of every alert
   * of a delivery round, mostly of alerts no rule holds: each rule's test of the labels comes before
   * its lookup, and the first cause found is the answer (bad server, then app, then API).
   */
  causeFor(alert: { fingerprint: string; labels: Labels }): InhibitionCause | undefined {
    const { labels } = alert;
    const server = labels.server && labels.check !== SERVERS_CHECK ? this.#badServers.get(labels.server) : undefined;
    if (server) return server;
    // Two map reads, no key built: a round asks of every alert, most of them about an app.
    const app =
      labels.app && URL_CHECKS.has(labels.check ?? '')
        ? this.#appsHeld.get(labels.namespace ?? '')?.get(labels.app)
        : undefined;
    if (app) return app;
    const api = this.#apiCause;
    return api && alert.fingerprint !== api.fingerprint && isCannotRead(alert) ? api : undefined;
  }

  /** Holds `app`'s URL alerts under `source` (the first cause of an app stands). */
  #holdApp(source: InhibitionSource, app: string, rule: InhibitRule, summary: string): void {
    const namespace = source.labels.namespace ?? '';
    const held = getOrAdd(this.#appsHeld, namespace, () => new Map());
    if (!held.has(app)) held.set(app, { rule, fingerprint: source.fingerprint, summary });
  }
}

/** The checks whose alerts are about an app's URLs: what an app's maintenance or its being down holds. */
const URL_CHECKS: ReadonlySet<string> = new Set<CheckName>(['url_checks', 'certificates']);

/** The check of a server-state finding: its alert is the cause, never held by itself. */
const SERVERS_CHECK: CheckName = 'servers';

function isCannotRead(alert: { labels: Labels }): boolean {
  return alert.labels.check === 'watchdog' && Boolean(alert.labels.source);
}
