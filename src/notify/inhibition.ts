/**
 * Inhibition: while a cause fires, the alerts that follow from it are held back and summarised
 * under it instead of paging once each (Alertmanager's inhibit rules, with the two causes this
 * watchdog knows built in):
 *
 * - `bad_servers`: a firing `servers` alert for server S (labels `{ check: 'servers', server: S }`)
 *   holds every other alert whose `server` label is S: every app on that server.
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
import type { Labels } from '../lib/alert-vocabulary.js';
import type { CheckName } from '../detectors/registry.js';
import type { InhibitSettings } from './notify-settings.js';

/** The rule that holds an alert back. */
export type InhibitRule = 'bad_servers' | 'api_unreadable';

/** A firing alert as the inhibitor reads it (an `AlertRow` fits). */
export interface InhibitionSource {
  fingerprint: string;
  status: string;
  summary: string;
  labels: Labels;
  firedAt: number | null;
}

/** Why an alert is held back: the rule and the firing alert that causes it. */
export interface InhibitionCause {
  rule: InhibitRule;
  fingerprint: string;
  summary: string;
}

/** Answers "is this alert held back, and by what?" for one moment's set of firing alerts. */
export class Inhibitor {
  readonly #badServers = new Map<string, InhibitionCause>();
  readonly #apiCause: InhibitionCause | undefined;

  /** `open`: the alerts open now (pending ones are ignored: only a firing alert is a cause). */
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
    if (settings.api_unreadable) {
      const first = firing
        .filter(isCannotRead)
        .sort((a, b) => (a.firedAt ?? 0) - (b.firedAt ?? 0) || a.fingerprint.localeCompare(b.fingerprint))[0];
      this.#apiCause = first && { rule: 'api_unreadable', fingerprint: first.fingerprint, summary: first.summary };
    }
  }

  /** The cause holding this alert back, or undefined when it may be announced. */
  causeFor(alert: { fingerprint: string; labels: Labels }): InhibitionCause | undefined {
    const { labels } = alert;
    if (labels.check !== SERVERS_CHECK && labels.server) {
      const cause = this.#badServers.get(labels.server);
      if (cause) return cause;
    }
    if (this.#apiCause && isCannotRead(alert) && alert.fingerprint !== this.#apiCause.fingerprint) {
      return this.#apiCause;
    }
    return undefined;
  }
}

/** The check of a server-state finding: its alert is the cause, never held by itself. */
const SERVERS_CHECK: CheckName = 'servers';

function isCannotRead(alert: { labels: Labels }): boolean {
  return alert.labels.check === 'watchdog' && Boolean(alert.labels.source);
}
