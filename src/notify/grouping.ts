/**
 * Grouping: the due rows of one channel become a few messages instead of one per event. Event rows
 * with the same group key (their route's `group_by` label values: check and environment by
 * default) share one message listing at most `maxItems` of them, worst first, with "and N more";
 * every row of the group is marked sent with that message, and an alert whose firing and repeats
 * waited together (a channel down for hours) is listed once. A notice is always a message of its own.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import { SEVERITY_RANK, type Severity } from '../lib/alert-vocabulary.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { AlertsNotification, Notification, NoticeNotification } from './channels/channel.js';
import type { OutboxRow } from './outbox-store.js';

/** One message to send and the outbox rows it delivers. */
export interface OutgoingMessage {
  notification: Notification;
  rows: OutboxRow[];
}

/**
 * Groups one channel's due rows (oldest first) into messages, the worst news first (a production
 * critical before the staging warnings read before it, news before resolves), else in the order of
 * each message's oldest row: a receiver that takes a message a second, or answers 429, hears the
 * worst first. 500 firing events of one check and environment become one message listing
 * `maxItems` of them and counting the rest. `attach` adds to each event what is known of it now
 * (its alert's context); by default events go as they were stored.
 */
export function groupDue(
  rows: readonly OutboxRow[],
  maxItems: number,
  attach: (event: AlertEvent) => AlertEvent = (event) => event,
): OutgoingMessage[] {
  // A notice is its own group (keyed by its row); a message keeps the place of its oldest row.
  const groups = new Map<string | OutboxRow, OutboxRow[]>();
  for (const row of rows) {
    const key = row.source === 'notice' ? row : row.groupKey;
    getOrAdd(groups, key, () => []).push(row);
  }
  const messages = [...groups.values()].map((group) => {
    const first = group[0]!;
    if (first.source === 'notice')
      return { notification: JSON.parse(first.payload) as NoticeNotification, rows: group };
    const events = latestNews(group.map((r) => JSON.parse(r.payload) as AlertEvent)).map(attach);
    const routes = [...new Set(group.map((r) => r.route))];
    const shown = { group: JSON.parse(first.groupKey) as Record<string, string>, alerts: events, routes };
    return { notification: groupMessage(shown, maxItems), rows: group };
  });
  // Stable: equals keep the order of their oldest row. Resolves rank last, so one alert's firing
  // (even in another group) is never sent after its resolve.
  return messages.sort((a, b) => urgencyOf(b.notification) - urgencyOf(a.notification));
}

/** How urgent a message is: its most important news's severity (a notice's own); resolves alone 0. */
function urgencyOf(message: Notification): number {
  const news = message.type === 'notice' ? [message] : message.events.filter((e) => e.kind !== 'resolved');
  return Math.max(0, ...news.map((e) => 1 + (SEVERITY_RANK[e.severity as Severity] ?? -1)));
}

/** The kinds that say an alert fires: a run of them with no resolve between is one thing to say. */
const FIRING_NEWS: ReadonlySet<AlertEvent['kind']> = new Set(['firing', 'repeat', 'escalated']);

/**
 * The events a message lists, oldest first: of each alert's run of firing news waiting together
 * (its firing and the repeats queued while the channel was down), only the latest, so one alert is
 * listed and counted once; a resolve, an acknowledgement and a new life are each said.
 */
function latestNews(events: readonly AlertEvent[]): AlertEvent[] {
  const kept: AlertEvent[] = [];
  const lastOf = new Map<string, number>();
  for (const event of events) {
    const at = lastOf.get(event.fingerprint);
    if (at !== undefined && FIRING_NEWS.has(event.kind) && FIRING_NEWS.has(kept[at]!.kind)) {
      kept[at] = event;
      continue;
    }
    lastOf.set(event.fingerprint, kept.push(event) - 1);
  }
  return kept;
}

/** An alert group's events and how they came: what a message about the group shows. */
export interface AlertGroup {
  /** The group's label values (`AlertsNotification.group`). */
  group: Record<string, string>;
  alerts: readonly AlertEvent[];
  /** The routes its events came by, for their runbooks. */
  routes: readonly string[];
}

/**
 * The message of a group: at most `maxItems` of its alerts listed, most important first, the rest
 * counted and kept (`omittedEvents`, for the channels that tell each alert).
 */
export function groupMessage({ group, alerts, routes }: AlertGroup, maxItems: number): AlertsNotification {
  const sorted = [...alerts].sort(byImportance);
  const omittedEvents = sorted.slice(maxItems);
  return {
    type: 'alerts',
    group,
    events: sorted.slice(0, maxItems),
    omitted: omittedEvents.length,
    omittedEvents,
    omittedResolved: omittedEvents.filter((e) => e.kind === 'resolved').length,
    routes: [...routes],
  };
}

/** News first (firing, escalated, repeat before resolved), then worst severity, then oldest: the order a message lists events in. */
export function byImportance(a: AlertEvent, b: AlertEvent): number {
  return (
    Number(a.kind === 'resolved') - Number(b.kind === 'resolved') ||
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    a.id - b.id
  );
}
