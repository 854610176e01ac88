/**
 * Acknowledging an alert: "I have it". The one way every surface does it (the console, the CLI,
 * Slack's buttons), so the state, the timeline and the words are the same whichever was used.
 *
 * An acknowledgement belongs to a firing alert's current life. While it lasts the lifecycle writes
 * no `repeat` for the alert (`decide`: 'acknowledged'); an escalation or a resolve ends it, and
 * still notifies. Giving it back (`unacknowledge`) lets the repeats resume.
 *
 * Each call is one transaction: the alert's acknowledgement columns, an `acknowledged` or
 * `unacknowledged` event in its timeline carrying who, where, when and why (the audit record: the
 * console's timeline shows it, as it shows a silence's author and reason), and a row of
 * `unrouted_events`, from which the daemon's outbox routes the event at its next delivery round (to
 * the channels that show acknowledgements: see `delivery-decision.ts`), whichever process wrote it.
 * A click on an alert already over, or already taken, changes nothing and says so: a named outcome,
 * never an exception.
 */
import { formatUtc } from '../lib/format-utc.js';
import type { Store } from '../state/store.js';
import type { AcknowledgeSurface, AlertEvent, AlertEventKind } from './alert-event.js';
import {
  acknowledgementNote,
  alertStoreOf,
  eventOf,
  type Acknowledgement,
  type AlertRow,
  type AlertStore,
} from './alert-store.js';

/** Who acknowledges (or gives an acknowledgement back), where, and why. */
export interface AcknowledgeRequest {
  /** The alert's fingerprint (`findAlert` turns a short id into one). */
  fingerprint: string;
  /** The person, as the surface knows them: the console's user, `--by` or $USER, the Slack user. */
  by: string;
  via: AcknowledgeSurface;
  /** Why, when they say; empty is none. */
  comment?: string | undefined;
  /** The channel it came through (an on-call tool's webhook): the event says it, so that channel is not told back. */
  channel?: string | undefined;
  now: number;
}

/** What {@link acknowledge} did, named. */
export type AcknowledgeOutcome =
  /** Done: the alert is acknowledged and its event written. */
  | { outcome: 'acknowledged'; alert: AlertRow; acknowledgement: Acknowledgement; event: AlertEvent }
  /** Someone (maybe the same person) has it already: nothing changed. */
  | { outcome: 'already_acknowledged'; alert: AlertRow; acknowledgement: Acknowledgement }
  /** Resolved (a stale click), or pending and not announced yet: nothing to take, nothing changed. */
  | { outcome: 'not_firing'; alert: AlertRow }
  /** No alert has that fingerprint (never, or pruned by retention). */
  | { outcome: 'not_found'; fingerprint: string };

/** What {@link unacknowledge} did, named. */
export type UnacknowledgeOutcome =
  /** Done: the acknowledgement `ended` is over, and the repeats resume. */
  | { outcome: 'unacknowledged'; alert: AlertRow; ended: Acknowledgement; event: AlertEvent }
  /** Nobody has it: nothing changed. */
  | { outcome: 'not_acknowledged'; alert: AlertRow }
  /** Not firing, or not found: as {@link AcknowledgeOutcome} says them. */
  | Extract<AcknowledgeOutcome, { outcome: 'not_firing' | 'not_found' }>;

/** An acknowledgement asked for with unusable words; nothing is written. */
export class AcknowledgeError extends Error {
  override name = 'AcknowledgeError';
}

/** The longest name taken: a person's, a Slack user's, an email address. */
const MAX_BY = 200;
/** The longest comment taken: a sentence or two, shown in the timeline and a message. */
const MAX_COMMENT = 1_000;

/**
 * Acknowledges a firing alert. Throws {@link AcknowledgeError} for an empty or overlong name or
 * an overlong comment (nothing written); every other answer is an {@link AcknowledgeOutcome}.
 */
export function acknowledge(store: Store | AlertStore, request: AcknowledgeRequest): AcknowledgeOutcome {
  return onFiring(store, request, (alerts, alert, mine): AcknowledgeOutcome => {
    if (alert.acknowledgement) {
      return { outcome: 'already_acknowledged', alert, acknowledgement: alert.acknowledgement };
    }
    alerts.setAcknowledgement(alert.fingerprint, mine);
    const event = write(alerts, alert, 'acknowledged', mine, request.channel);
    return { outcome: 'acknowledged', alert: { ...alert, acknowledgement: mine }, acknowledgement: mine, event };
  });
}

/**
 * Gives an acknowledgement back: the alert's repeats resume (a repeat already due goes at the next
 * cycle). Throws {@link AcknowledgeError} as {@link acknowledge} does.
 */
export function unacknowledge(store: Store | AlertStore, request: AcknowledgeRequest): UnacknowledgeOutcome {
  return onFiring(store, request, (alerts, alert, mine): UnacknowledgeOutcome => {
    const ended = alert.acknowledgement;
    if (!ended) return { outcome: 'not_acknowledged', alert };
    alerts.setAcknowledgement(alert.fingerprint, null);
    const event = write(alerts, alert, 'unacknowledged', mine, request.channel);
    return { outcome: 'unacknowledged', alert: { ...alert, acknowledgement: null }, ended, event };
  });
}

/**
 * Checks the request, then, in one transaction, reads the alert and hands a firing one to `act`
 * with what this request would record (who, where, when, why); answers for a missing or not-firing
 * one itself.
 */
function onFiring<T>(
  store: Store | AlertStore,
  request: AcknowledgeRequest,
  act: (alerts: AlertStore, alert: AlertRow, mine: Acknowledgement) => T,
): T | Extract<AcknowledgeOutcome, { outcome: 'not_firing' | 'not_found' }> {
  const alerts = alertStoreOf(store);
  const { by, comment } = checkRequest(request);
  return alerts.store.transaction(() => {
    const alert = alerts.get(request.fingerprint);
    if (!alert) return { outcome: 'not_found' as const, fingerprint: request.fingerprint };
    if (alert.status !== 'firing') return { outcome: 'not_firing' as const, alert };
    return act(alerts, alert, { by, via: request.via, at: request.now, comment });
  });
}

/** What happened, in a sentence of plain text each surface shows its own way (escaped for it). */
export function acknowledgeText(result: AcknowledgeOutcome | UnacknowledgeOutcome): string {
  switch (result.outcome) {
    case 'acknowledged':
      return `Acknowledged by ${result.acknowledgement.by}: its repeats stop until it resolves or gets worse.`;
    case 'already_acknowledged':
      return `Already acknowledged by ${whoAndWhen(result.acknowledgement)}: nothing changed.`;
    case 'unacknowledged':
      return `The acknowledgement by ${result.ended.by} is given back: its repeats resume.`;
    case 'not_acknowledged':
      return 'Nobody has acknowledged it: nothing changed.';
    case 'not_firing':
      return notFiringText(result.alert, 'acknowledge');
    case 'not_found':
      return `There is no alert ${result.fingerprint} (an alert long over is forgotten): nothing changed.`;
  }
}

/** What an action on an alert no longer (or not yet) firing is told: nothing to `what`, nothing changed. */
export function notFiringText(alert: Pick<AlertRow, 'status' | 'resolvedAt'>, what: string): string {
  return alert.status === 'resolved' && alert.resolvedAt !== null
    ? `It was resolved at ${formatUtc(alert.resolvedAt)}: nothing to ${what}, nothing changed.`
    : `It is not firing yet (pending): nothing to ${what}, nothing changed.`;
}

/** "alice (console, 2026-11-01 12:00 UTC)". */
export function whoAndWhen(ack: Acknowledgement): string {
  return `${ack.by} (${ack.via}, ${formatUtc(ack.at)})`;
}

/** The name and comment as stored, or an {@link AcknowledgeError} saying what is wrong. */
function checkRequest(request: AcknowledgeRequest): { by: string; comment: string | null } {
  const by = request.by.trim();
  if (by === '') throw new AcknowledgeError('an acknowledgement needs the name of who gives it');
  if (by.length > MAX_BY) throw new AcknowledgeError(`the name is ${by.length} characters long; at most ${MAX_BY}`);
  const comment = request.comment?.trim() ?? '';
  if (comment.length > MAX_COMMENT) {
    throw new AcknowledgeError(`the comment is ${comment.length} characters long; at most ${MAX_COMMENT}`);
  }
  return { by, comment: comment === '' ? null : comment };
}

/** Writes the event of an acknowledgement (or its giving back) and leaves it for the outbox. */
function write(
  alerts: AlertStore,
  alert: AlertRow,
  kind: Extract<AlertEventKind, 'acknowledged' | 'unacknowledged'>,
  ack: Acknowledgement,
  channel: string | undefined,
): AlertEvent {
  const reason =
    kind === 'acknowledged' ? `acknowledged by ${ack.by} (${ack.via})` : `given back by ${ack.by} (${ack.via})`;
  const note = { ...acknowledgementNote(ack), ...(channel !== undefined ? { channel } : {}) };
  const event = alerts.insertEvent({ ...eventOf(alert, kind, ack.at, reason), acknowledgement: note }, ack.at)();
  alerts.queueUnrouted(event.id, ack.at);
  return event;
}
