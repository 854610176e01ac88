import type { Finding } from '../detectors/finding.js';
import type { AlertContext } from '../lib/alert-vocabulary.js';

/**
 * Why an event was written: the lifecycle's decision, named (Alertmanager-style), so logs and
 * messages explain themselves.
 */
export type AlertEventKind =
  /** The problem is new (or was seen in `for` consecutive cycles). */
  | 'firing'
  /** Still there and `repeat_interval` has passed since it was last announced. */
  | 'repeat'
  /** Still there and its severity rose. */
  | 'escalated'
  /** Gone from a complete snapshot. */
  | 'resolved'
  /** Someone took it (console, CLI, Slack): its repeats stop until it resolves or escalates. */
  | 'acknowledged'
  /** Someone gave an acknowledgement back: its repeats resume. */
  | 'unacknowledged';

/**
 * Whether an event is of a kind a person writes (`src/alerts/acknowledge.ts`) rather than the
 * lifecycle: such an event says who did what to an alert, not what the alert did, so it never
 * restarts a channel's repeat clock.
 */
export function isAcknowledgementKind(kind: AlertEventKind): boolean {
  return kind === 'acknowledged' || kind === 'unacknowledged';
}

/**
 * Where an acknowledgement was given (or given back): here (the console, the CLI, Slack's buttons),
 * or in the on-call tool that pages for the alert (its webhook, `src/interactions/on-call-webhook.ts`).
 */
export type AcknowledgeSurface = 'console' | 'cli' | 'slack' | 'pagerduty' | 'opsgenie';

/**
 * Who acknowledged an alert (or gave it back), through which surface, when (ISO 8601) and why, as
 * an event carries it. The person's name and comment are their text: shown, never obeyed.
 */
export interface AcknowledgementNote {
  by: string;
  via: AcknowledgeSurface;
  at: string;
  /** Absent when they gave none. */
  comment?: string;
  /**
   * The channel it came through, when it came from an on-call tool's webhook: that channel is not
   * told back what it told us (`delivery-decision.ts`, 'acknowledged_there').
   */
  channel?: string;
}

/**
 * What an alert event says about the problem, as its finding said it: the same fields, typed from
 * {@link Finding} so the two cannot drift apart. (`url` is not among them: an event always carries
 * one, null where unknown, where a finding may leave it out.) `facts` is absent only from an event of
 * an alert stored before alerts kept them (state version 6): a renderer then asks the check's
 * presentation, which shows it as it was shown then.
 */
export type AlertFacts = Pick<
  Finding,
  'fingerprint' | 'check' | 'severity' | 'summary' | 'details' | 'labels' | 'since' | 'subject' | 'brief'
> &
  Partial<Pick<Finding, 'facts'>>;

/**
 * One change in an alert's life, as stored with its outbox rows and as handed to channels to render.
 * It carries a copy of the alert as it was at that moment, so a message can be rendered without
 * reading anything else.
 */
export interface AlertEvent extends AlertFacts {
  /** Row id in the events table. */
  id: number;
  kind: AlertEventKind;
  url: string | null;
  /** When the alert started firing (ISO 8601). */
  startsAt: string;
  /** When it resolved (ISO 8601), for `resolved` events. */
  endsAt: string | null;
  /** When this event was written (ISO 8601). */
  at: string;
  /**
   * The lifecycle's named reason for this event ("first sighting", "seen for 3 cycles",
   * "repeat interval elapsed", "severity rose warning→critical", "absent from complete snapshot"),
   * for logs and message footers. Optional so hand-built events (tests, notify-test) need not invent one.
   */
  reason?: string;
  /**
   * Why the problem is over, as its check read it in the snapshot that resolved it ("run #5981
   * succeeded", "certificate renewed: valid until …"), on resolved events where it could tell: shown
   * under "RESOLVED". Absent: the message says only that it is over, never the failure as if it
   * were still true.
   */
  resolution?: string;
  /** The job whose snapshots decide this alert (`runs`, `urls`, …). */
  job?: string;
  /**
   * What the API told about the alert after its cycle (the log around a failed run, its restore
   * point): never stored with the event, added by delivery when a message is built, where it was
   * read in time. Absent: none asked, not read (yet), or a resolve (what was is not shown).
   */
  context?: AlertContext;
  /**
   * On an `acknowledged` event, the acknowledgement made; on an `unacknowledged` one, who gave it
   * back, where, when and why. A channel that keeps one message per alert shows it ("Acknowledged
   * by …").
   */
  acknowledgement?: AcknowledgementNote;
  /**
   * On an `escalated` or `resolved` event of an acknowledged alert: the acknowledgement the event
   * ended (an escalation is news the person who took it has not seen; a resolve ends the alert).
   */
  acknowledgementCleared?: AcknowledgementNote;
  /**
   * On an `escalated` event a route's escalation wrote (nobody acknowledged the alert in time,
   * `notify.routes[].escalate_after`): how long it waited, and the channels told before.
   */
  unanswered?: EscalationNote;
}

/** Why an alert was escalated to more channels: unacknowledged for `afterMs`, after `toldBefore` heard it. */
export interface EscalationNote {
  afterMs: number;
  /** The channels that had been told it fires, in the order they heard it. */
  toldBefore: string[];
}
