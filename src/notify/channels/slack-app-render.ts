/**
 * What the Slack app channel's living message shows: the alert group as it stands now, rendered by
 * the same Block Kit renderer as every Slack message (`slack-render.ts`), from the latest event of
 * each alert it has shown (firing ones first, resolved ones marked as such), with the header and a
 * colour bar that follow the worst alert still open and turn green when all are over. Pure.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import { groupMessage, type AlertGroup } from '../grouping.js';
import type { AlertsNotification } from './channel.js';
import { describeHeadline, type Tone } from './describe.js';
import { escapeMrkdwn } from './escape.js';
import { alertsOf } from './incident-parts.js';
import { context, renderSlack, type SlackBlock, type SlackMessage, type SlackRenderOptions } from './slack-render.js';
import { SLACK_LIMITS } from './slack-limits.js';

/** The colour bar of each tone (Slack's attachment `color`). */
export const TONE_COLOURS: Readonly<Record<Tone, string>> = {
  critical: '#d92d20',
  warning: '#f79009',
  info: '#2e90fa',
  resolved: '#12b76a',
  ok: '#12b76a',
};

/**
 * A message as `chat.postMessage` and `chat.update` take it. The living message: its header on
 * top, the rest beside a colour bar (an attachment); a thread reply or a notice: blocks alone, as
 * the webhook channel sends them.
 */
export interface SlackAppMessage extends SlackMessage {
  attachments?: { color: string; blocks: SlackBlock[] }[];
}

/** What a living message shows: its group, the latest event of each alert, and its notes. */
export interface LivingState extends AlertGroup {
  /** Lines about its alerts that are not alert events (a remediation's outcome), oldest first. */
  notes: readonly string[];
}

/** What a delivery of an alert group tells its living message (Slack's or Discord's). */
export interface LivingDelivery {
  /** JSON of the group's label values: with the channel's name, the living message's key. */
  groupKey: string;
  group: Record<string, string>;
  /** Every event delivered, those the message's cap left out included. */
  events: AlertEvent[];
  routes: string[];
}

/** The living part of an alerts notification: its group, all its events, its routes. */
export function livingDelivery(n: AlertsNotification): LivingDelivery {
  return { groupKey: JSON.stringify(n.group), group: n.group, events: alertsOf(n), routes: n.routes ?? [] };
}

/**
 * The alerts a message shows after a delivery: the latest event of each alert, those delivered now
 * replacing those shown before (event ids only grow, so a late retry never rolls one back).
 */
export function mergeShown(shown: readonly AlertEvent[], delivered: readonly AlertEvent[]): AlertEvent[] {
  const latest = new Map(shown.map((e) => [e.fingerprint, e]));
  for (const e of delivered) {
    const before = latest.get(e.fingerprint);
    if (!before || before.id <= e.id) latest.set(e.fingerprint, e);
  }
  return [...latest.values()];
}

/** A group's state after a delivery: what its message showed before (if any), the delivery's events and routes added. */
export function stateAfter(
  shown: Omit<LivingState, 'group'> | undefined,
  delivered: Omit<LivingDelivery, 'groupKey'>,
): LivingState {
  return {
    group: delivered.group,
    alerts: mergeShown(shown?.alerts ?? [], delivered.events),
    notes: shown?.notes ?? [],
    routes: [...new Set([...(shown?.routes ?? []), ...delivered.routes])],
  };
}

/** True when every alert a message shows is over: the message closes and the group's next event starts a new one. */
export function allResolved(alerts: readonly AlertEvent[]): boolean {
  return alerts.length > 0 && alerts.every((e) => e.kind === 'resolved');
}

/** The living message of a group as it stands: at most `maxItems` alerts listed, worst first, the rest counted. */
export function renderLiving(state: LivingState, maxItems: number, options: SlackRenderOptions): SlackAppMessage {
  const n = groupMessage(state, maxItems);
  const rendered = renderSlack(n, options);
  const [header, ...rest] = rendered.blocks;
  // The notes go above the footer, where there is room: they are in the thread all the same.
  if (state.notes.length > 0 && rendered.blocks.length < SLACK_LIMITS.blocks) {
    const notes = state.notes.map((note) => `*Latest:* ${escapeMrkdwn(note, 500)}`).join('\n');
    rest.splice(Math.max(0, rest.length - 1), 0, context(notes));
  }
  return {
    text: rendered.text,
    blocks: header ? [header] : [],
    attachments: [{ color: TONE_COLOURS[describeHeadline(n).tone], blocks: rest }],
  };
}
