/**
 * Grouping: the due rows of one channel become a few messages instead of one per event. Event rows
 * with the same group key (their route's `group_by` label values: check and environment by
 * default) share one message listing at most `maxItems` of them, worst first, with "and N more";
 * every row of the group is marked sent with that message. A notice is always a message of its own.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import { SEVERITY_RANK } from '../lib/alert-vocabulary.js';
import type { Notification, NoticeNotification } from './channels/channel.js';
import type { OutboxRow } from './outbox-store.js';

/** One message to send and the outbox rows it delivers. */
export interface OutgoingMessage {
  notification: Notification;
  rows: OutboxRow[];
}

/**
 * Groups one channel's due rows (oldest first) into messages, in the order of each message's
 * oldest row. 500 firing events of one check and environment become one message listing
 * `maxItems` of them and counting the rest. `attach` adds to each event what is known of it now
 * (its alert's context); by default events go as they were stored.
 */
export function groupDue(
  rows: readonly OutboxRow[],
  maxItems: number,
  attach: (event: AlertEvent) => AlertEvent = (event) => event,
): OutgoingMessage[] {
  const out: OutgoingMessage[] = [];
  const groups = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    if (row.source === 'notice') {
      out.push({ notification: JSON.parse(row.payload) as NoticeNotification, rows: [row] });
      continue;
    }
    let group = groups.get(row.groupKey);
    if (!group) {
      group = [];
      groups.set(row.groupKey, group);
      // Pushed now so the message keeps the place of its oldest row; its events are filled in below.
      const notification = {
        type: 'alerts' as const,
        group: JSON.parse(row.groupKey) as Record<string, string>,
        events: [],
        omitted: 0,
      };
      out.push({ notification, rows: group });
    }
    group.push(row);
  }
  for (const message of out) {
    if (message.notification.type !== 'alerts') continue;
    const events = message.rows.map((r) => attach(JSON.parse(r.payload) as AlertEvent)).sort(byImportance);
    message.notification.events = events.slice(0, maxItems);
    message.notification.omitted = events.length - message.notification.events.length;
    message.notification.omittedEvents = events.slice(maxItems);
    message.notification.omittedResolved = message.notification.omittedEvents.filter(
      (e) => e.kind === 'resolved',
    ).length;
    message.notification.routes = [...new Set(message.rows.map((r) => r.route))];
  }
  return out;
}

/** News first (firing, escalated, repeat before resolved), then worst severity, then oldest: the order a message lists events in. */
export function byImportance(a: AlertEvent, b: AlertEvent): number {
  return (
    Number(a.kind === 'resolved') - Number(b.kind === 'resolved') ||
    SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
    a.id - b.id
  );
}
