/**
 * What happens to one event on one channel, decided by a short pipeline of stages that all have
 * the same signature (Alertmanager's `Stage.Exec`): each looks at the facts and either answers with
 * a named decision or passes. The first answer wins; when every stage passes, the event is
 * delivered. The decision is stored on the outbox row, so the audit says why a message was or
 * was not sent.
 */
import { isAcknowledgementKind, type AlertEvent, type AlertEventKind } from '../alerts/alert-event.js';
import { FOLDED_REASON } from '../alerts/decide.js';
import { isDigestOnly, type Labels } from '../lib/alert-vocabulary.js';
import { clockWentBack } from '../lib/clock.js';
import type { InhibitionCause } from './inhibition.js';
import type { ResolvedRoute } from './router.js';

/**
 * Every decision, named, and what the outbox row becomes for it: sent (`pending`), decided again
 * every round (`held`), or kept for the audit alone (`suppressed`).
 */
export const STATUS_OF_DECISION = {
  /** Send it. */
  deliver: 'pending',
  /**
   * An operator's silence matches the alert: held while it lasts and decided again every round,
   * so an alert still firing when the silence ends (or is lifted) is announced then, once.
   */
  silenced: 'held',
  /** The route is in one of its mute windows: held until the window ends. */
  muted_window: 'held',
  /** A cause (a bad server, the API unreadable) fires: held until it clears, summarised under it. */
  inhibited: 'held',
  /** The route has `send_resolved: false`. */
  resolved_not_sent: 'suppressed',
  /**
   * An acknowledgement (or its giving back) the channel is not told of: the route says
   * `send_acknowledged: false`, or says nothing and the channel's kind does not show them.
   */
  acknowledgement_not_sent: 'suppressed',
  /** An acknowledgement of an alert the channel was never told fires (silenced, held): nothing to say. */
  acknowledged_quietly: 'suppressed',
  /** An acknowledgement that came from this very channel (its on-call tool's webhook): it knows. */
  acknowledged_there: 'suppressed',
  /**
   * A repeat before this route's own repeat interval has passed on this channel (the lifecycle
   * repeats at the smallest interval of all routes): held until it has, so each route repeats at
   * its own interval; replaced by a newer event of the alert, dropped if the alert ends first.
   */
  repeat_waiting: 'held',
  /**
   * A repeat on a route with `repeat_interval: off`; or a new firing the channel would take for a
   * repeat not due yet: it was told the alert fires and never that it ended.
   */
  repeat_not_due: 'suppressed',
  /** Resolved, but the channel was never told it fired (silenced or held all along): nothing to say. */
  resolved_quietly: 'suppressed',
  /** A held row made obsolete by a newer event of the same alert on the same channel. */
  superseded: 'suppressed',
  /**
   * The alert resolved because another alert of ours now reports the same problem (an attention
   * item folded into it): no news for a channel that pages. A channel that keeps a message per
   * alert still hears it, so its message stops showing the alert as firing.
   */
  folded: 'suppressed',
  /** The alert is for the daily digest alone (label `delivery: digest`): listed there, never sent on its own. */
  digest_only: 'suppressed',
  /**
   * A new alert whose context (its log, its restore point) is being read: held up to
   * `notify.context.wait`, decided again every round and as soon as it is read.
   */
  awaiting_context: 'held',
  /** Its context was not read within `notify.context.wait`: sent without it. */
  context_wait_over: 'pending',
} as const satisfies Record<string, 'pending' | 'held' | 'suppressed'>;

/** Every decision, named (see {@link STATUS_OF_DECISION}). */
export type NotifyDecision = keyof typeof STATUS_OF_DECISION;

/** What a channel was last told about one alert (a `notification_log` row). */
export interface NotificationLogEntry {
  lastKind: AlertEventKind;
  /** When the last event was decided `deliver` for this channel. */
  announcedAt: number;
}

/** Everything the stages look at, gathered by the outbox. */
export interface DecisionFacts {
  /** The event decided, as much of it as the stages read. */
  event: Pick<AlertEvent, 'kind' | 'fingerprint' | 'reason'> & {
    labels: Labels;
    acknowledgement?: Pick<NonNullable<AlertEvent['acknowledgement']>, 'channel'> | undefined;
  };
  route: ResolvedRoute;
  /** The channel decided for; absent in tests that need no name. */
  channel?: string | undefined;
  now: number;
  /** Whether the channel's kind shows acknowledgements where the route does not say (`Channel.showsAcknowledgements`). */
  showsAcknowledgements?: boolean | undefined;
  /** The id of a silence in force that matches the alert. */
  silenceId: string | undefined;
  cause: InhibitionCause | undefined;
  log: NotificationLogEntry | undefined;
  /** The alert's context is being read since `since` (ms), and its message waits up to `waitMs`; absent: nothing to wait for. */
  contextPending?: { since: number; waitMs: number } | undefined;
}

/** A decision with the detail that explains it (a silence id, a window name, a cause). */
export interface Decided {
  decision: NotifyDecision;
  detail?: string;
  cause?: InhibitionCause;
  /**
   * A held row not decided again before this time (ms): nothing can send it sooner, and what would
   * drop it (the alert resolved or acknowledged) drops it then just as well.
   */
  until?: number;
}

/** One stage: answers a decision or passes (undefined). */
export type DecisionStage = (facts: DecisionFacts) => Decided | undefined;

/** True when the channel was told the alert fires and not yet that it is over. */
export function announced(log: NotificationLogEntry | undefined): boolean {
  return log !== undefined && log.lastKind !== 'resolved';
}

const digestOnly: DecisionStage = ({ event }) =>
  isDigestOnly(event.labels)
    ? { decision: 'digest_only', detail: 'listed in the daily digest (notify.digest), never sent on its own' }
    : undefined;

/** Acknowledgements go only where they are wanted, and only where the alert was announced. */
const acknowledgementNotSent: DecisionStage = ({ event, route, showsAcknowledgements }) => {
  if (!isAcknowledgementKind(event.kind) || (route.sendAcknowledged ?? showsAcknowledgements === true)) {
    return undefined;
  }
  return {
    decision: 'acknowledgement_not_sent',
    detail:
      route.sendAcknowledged === false
        ? `route ${route.name} has send_acknowledged: false`
        : `the channel does not show acknowledgements unless route ${route.name} has send_acknowledged: true`,
  };
};

const acknowledgedQuietly: DecisionStage = ({ event, log }) =>
  isAcknowledgementKind(event.kind) && !announced(log)
    ? { decision: 'acknowledged_quietly', detail: 'the firing was never sent to this channel' }
    : undefined;

/** Told from the tool behind this channel (PagerDuty, Opsgenie): telling it back would echo it. */
const acknowledgedThere: DecisionStage = ({ event, channel }) =>
  isAcknowledgementKind(event.kind) && channel !== undefined && event.acknowledgement?.channel === channel
    ? { decision: 'acknowledged_there', detail: `it came from ${channel}` }
    : undefined;

const resolvedQuietly: DecisionStage = ({ event, log }) =>
  event.kind === 'resolved' && !announced(log)
    ? { decision: 'resolved_quietly', detail: 'the firing was never sent to this channel' }
    : undefined;

const folded: DecisionStage = ({ event, showsAcknowledgements }) =>
  event.kind === 'resolved' && event.reason === FOLDED_REASON && showsAcknowledgements !== true
    ? { decision: 'folded', detail: 'folded into another alert, which carries the problem on' }
    : undefined;

const silenced: DecisionStage = ({ silenceId }) =>
  silenceId ? { decision: 'silenced', detail: `silence ${silenceId}` } : undefined;

const resolvedNotSent: DecisionStage = ({ event, route }) =>
  event.kind === 'resolved' && !route.sendResolved
    ? { decision: 'resolved_not_sent', detail: `route ${route.name} has send_resolved: false` }
    : undefined;

const mutedWindow: DecisionStage = ({ route, now }) => {
  const window = route.muteWindows.find((w) => w.isActive(now));
  return window ? { decision: 'muted_window', detail: `mute window ${window.name}` } : undefined;
};

const inhibited: DecisionStage = ({ cause }) =>
  cause ? { decision: 'inhibited', detail: `${cause.rule}: ${cause.summary}`, cause } : undefined;

/**
 * A repeat waits for the route's interval on this channel, held until then (never, for `off`). A
 * new firing of an alert the channel was told fires and never told ended (its resolve held by a
 * silence, a mute window or a cause, then replaced by this new life) is no news before then: to
 * that channel the problem never stopped, and the lifecycle's next repeat reminds it.
 */
const repeatNotDue: DecisionStage = ({ event, route, log, now }) => {
  // A repeat of an alert this channel never heard of (silenced until now) is its first announcement.
  if ((event.kind !== 'repeat' && event.kind !== 'firing') || !announced(log) || !log) return undefined;
  const dueAt = log.announcedAt + route.repeatIntervalMs;
  // Held further ahead than the interval, the channel was told "after" now: the clock went back,
  // and waiting for the log's time would add the step to the interval.
  if (now >= dueAt || clockWentBack(dueAt, now, route.repeatIntervalMs)) return undefined;
  const detail = `route ${route.name} repeats after ${route.repeatIntervalMs} ms`;
  if (event.kind === 'repeat' && Number.isFinite(dueAt)) return { decision: 'repeat_waiting', detail, until: dueAt };
  return { decision: 'repeat_not_due', detail };
};

/** A new or escalated alert waits for its context, up to the wait; past it, it goes without. */
const awaitingContext: DecisionStage = ({ event, contextPending, now }) => {
  if (!contextPending || (event.kind !== 'firing' && event.kind !== 'escalated')) return undefined;
  const { since, waitMs } = contextPending;
  return now < since + waitMs
    ? { decision: 'awaiting_context', detail: `its context is being read (up to ${waitMs} ms)` }
    : { decision: 'context_wait_over', detail: `its context was not read within ${waitMs} ms` };
};

/**
 * The stages in order: an alert for the digest alone is never sent, whatever else holds; an
 * acknowledgement the channel does not want, or of an alert it never heard of, is dropped next,
 * and so is a resolve nobody heard the start of, and one folded into another alert; silences beat everything else; a muted route holds
 * before inhibition is looked at (the window's end re-decides); waiting for the context comes
 * last, so a message held for another reason does not wait on it too (by the time it goes, its
 * context is read or the wait is over).
 */
export const DECISION_STAGES: readonly DecisionStage[] = [
  digestOnly,
  acknowledgementNotSent,
  acknowledgedQuietly,
  acknowledgedThere,
  resolvedQuietly,
  folded,
  silenced,
  resolvedNotSent,
  mutedWindow,
  inhibited,
  repeatNotDue,
  awaitingContext,
];

/** Runs the stages; `deliver` when none of them objects. */
export function decideDelivery(facts: DecisionFacts, stages: readonly DecisionStage[] = DECISION_STAGES): Decided {
  for (const stage of stages) {
    const decided = stage(facts);
    if (decided) return decided;
  }
  return { decision: 'deliver' };
}
