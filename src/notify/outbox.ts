/**
 * The transactional outbox: every notification is written to SQLite in the same transaction as
 * the alert change that caused it, so a crash at any moment loses none. Writing runs the pipeline
 * mute → dedup → route: each event is routed to its channels, and for each (event, channel) one
 * named decision is stored: `deliver` rows wait for the delivery loop, `held` rows (silenced,
 * inhibited, in a mute window, awaiting their alert's context) are decided again every round, a
 * repeat waiting for its route's interval once its time has come, and every other decision is
 * kept for the audit.
 */
import { isAcknowledgementKind, type AlertEvent } from '../alerts/alert-event.js';
import { eventOf, alertStoreOf, type AlertRow } from '../alerts/alert-store.js';
import { clockWentBack, warnWaitsEndEarly } from '../lib/clock.js';
import { formatDuration } from '../lib/format-duration.js';
import { getOrAdd } from '../lib/get-or-add.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import type { Labels } from '../lib/alert-vocabulary.js';
import type { Metrics } from '../lib/metrics.js';
import type { AlertContextSource } from './alert-context-source.js';
import type { NoticeNotification } from './channels/channel.js';
import { worstFiring } from './channels/describe.js';
import {
  announced,
  decideDelivery,
  STATUS_OF_DECISION,
  type Decided,
  type DecisionFacts,
  type NotifyDecision,
} from './delivery-decision.js';
import { Inhibitor, type InhibitionCause } from './inhibition.js';
import type { NotifySettings } from './notify-settings.js';
import type { OutboxRow, OutboxStore, StoredBody } from './outbox-store.js';
import type { ResolvedRoute, RouteTarget, Router } from './router.js';

/** Answers the id of a silence in force matching the labels, or undefined. */
export type SilenceLookup = (labels: Labels) => string | undefined;

/** What the outbox needs besides its tables. */
export interface OutboxOptions {
  router: Router;
  /** The inhibition rules on, and the items an inhibition summary lists before "and N more". */
  settings: Pick<NotifySettings, 'inhibit' | 'max_items_per_message'>;
  /** The silences in force at `now`, read once per pass. */
  silencesAt: (now: number) => SilenceLookup;
  /**
   * The channels whose kind shows acknowledgements unless a route says otherwise
   * (`Channel.showsAcknowledgements`). Absent: none.
   */
  showsAcknowledgements?: ReadonlySet<string>;
  /** The alerts' context: a new alert's row waits for it (`awaiting_context`). Absent: nothing waits. */
  context?: AlertContextSource;
  logger?: Logger;
  metrics?: Metrics;
}

/** What one pass wrote: rows by decision. */
export interface OutboxPass {
  decisions: Partial<Record<NotifyDecision, number>>;
  /** Inhibition summaries queued (one per channel and cause). */
  summaries: number;
}

/** The channel a notice goes to; notices skip routing and go out as they are. */
const NOTICE_ROUTE = 'notice';

/** What a pass decides by: the inhibitions, the silences and the open alerts, at its start. */
type PassFacts = { inhibitor: Inhibitor; silenceOf: SilenceLookup; open: Map<string, AlertRow> };

/** The causes that held rows back during one pass, per channel, for the summaries. */
type HeldByCause = Map<string, Map<string, InhibitionCause>>;

/**
 * The notification-log key under which a channel's inhibition summary for a cause is recorded:
 * the summary goes out once per (channel, cause) while the cause fires, not once per pass.
 */
export function inhibitLogKey(causeFingerprint: string): string {
  return `inhibit:${causeFingerprint}`;
}

/**
 * The notification-log key under which a route's escalation of an alert is recorded (the log's
 * channel column holds the route's name): escalated in the alert's current life when its time is
 * at or after the alert fired. Closed when the alert resolves, so retention prunes it.
 */
export function escalationLogKey(fingerprint: string): string {
  return `escalate:${fingerprint}`;
}

/** Writes outbox rows and re-decides held ones. */
export class Outbox {
  readonly #log: Logger;

  constructor(
    readonly rows: OutboxStore,
    private readonly options: OutboxOptions,
  ) {
    this.#log = options.logger ?? silentLogger;
  }

  /**
   * Routes and decides each event for each of its channels and writes the rows. Must run inside
   * the caller's transaction, the one that wrote the events, so both commit or neither does.
   */
  enqueue(events: readonly AlertEvent[], now: number): OutboxPass {
    this.#requireTransaction('enqueue');
    const pass: OutboxPass = { decisions: {}, summaries: 0 };
    if (events.length === 0) return pass;
    const facts = this.#factsAt(now);
    const held: HeldByCause = new Map();
    const told = toldOfPass(this.rows, events);
    for (const event of events) {
      // A cause that is over closes its summaries: the next time it fires is news again.
      if (event.kind === 'resolved') {
        this.rows.logClosedEverywhere(inhibitLogKey(event.fingerprint));
        this.rows.logClosedEverywhere(escalationLogKey(event.fingerprint));
      }
      const holds = this.#holdsOf(facts, event);
      const acknowledgement = isAcknowledgementKind(event.kind);
      // Routed after its cycle (by the delivery round): the alert may be over, or in a new life, by now.
      const over = acknowledgement && !firingInLife(facts.open.get(event.fingerprint), event);
      const body = this.#bodyOf(event, now);
      for (const { channel, route } of this.#targets(event, told)) {
        const log = told.logEntry(event.fingerprint, channel);
        // A newer event of the same alert makes what was held for this channel obsolete; an
        // acknowledgement only an older acknowledgement: who has the alert is no news of the alert.
        for (const old of told.heldFor(event.fingerprint, channel)) {
          if (acknowledgement && !isAcknowledgementKind(old.kind as AlertEvent['kind'])) continue;
          const quiet = event.kind === 'resolved' && !announced(log);
          const decision: NotifyDecision = quiet ? 'resolved_quietly' : 'superseded';
          this.rows.redecide(old.id, rowDecision({ decision, detail: `by event ${event.id}` }, now), now);
          this.#count(pass, channel, decision);
        }
        const decided: Decided = over
          ? { decision: 'superseded', detail: 'the alert is no longer firing' }
          : this.#decide({ event, channel, route, now, log, ...holds });
        this.#write(event, body, channel, route, decided, now, pass, held);
      }
      told.written(event.fingerprint);
    }
    pass.summaries = this.#summaries(held, facts, now);
    this.#logPass('queued notifications', events.length, pass);
    return pass;
  }

  /**
   * Escalations due at `now`: each firing alert nobody acknowledged within its route's
   * `escalate_after` (counted from when it fired) is sent to the route's `escalate_to` channels,
   * once per firing, as an `escalated` event naming the channels told before. Recorded in the
   * notification log under {@link escalationLogKey} in the transaction that writes its rows, so a
   * restart, a second delivery round or another replica never sends it again. A silenced alert
   * waits for nobody: it escalates only if still unanswered when its silence ends. Runs in its own
   * transaction (or the caller's): the leader's delivery housekeeping.
   */
  escalate(now: number): OutboxPass {
    const pass: OutboxPass = { decisions: {}, summaries: 0 };
    // Every delivery round asks: a config without escalation reads nothing for it.
    if (!this.options.router.all().some((r) => r.escalation)) return pass;
    this.rows.store.transaction(() => {
      const facts = this.#factsAt(now);
      const held: HeldByCause = new Map();
      for (const alert of facts.open.values()) {
        if (alert.status !== 'firing' || alert.acknowledgement !== null || alert.firedAt === null) continue;
        if (facts.silenceOf(alert.labels)) continue;
        // Each route once, however many of its channels the alert goes to.
        for (const route of new Set(this.options.router.route(alert.labels, alert.severity).map((t) => t.route))) {
          if (!route.escalation || now < alert.firedAt + route.escalation.afterMs) continue;
          const key = escalationLogKey(alert.fingerprint);
          const done = this.rows.logEntry(key, route.name);
          if (done && done.announcedAt >= alert.firedAt) continue;
          const eventId = this.rows.lastNewsOf(alert.fingerprint);
          if (eventId === undefined) continue;
          const { afterMs, to } = route.escalation;
          const toldBefore = this.rows.toldOf(alert.fingerprint);
          const event: AlertEvent = {
            ...eventOf(alert, 'escalated', now, `unacknowledged for ${formatDuration(afterMs)}`),
            id: eventId,
            unanswered: { afterMs, toldBefore },
          };
          const body = this.#bodyOf(event, now);
          for (const channel of to) {
            if (toldBefore.includes(channel)) continue;
            const cause = facts.inhibitor.causeFor(event);
            const log = this.rows.logEntry(alert.fingerprint, channel);
            const decided = this.#decide({ event, channel, route, now, silenceId: undefined, cause, log });
            this.#write(event, body, channel, route, decided, now, pass, held);
          }
          this.rows.logAnnounced(key, route.name, 'firing', now);
          this.#log.info(
            { fingerprint: alert.fingerprint, route: route.name, to, toldBefore },
            'alert unacknowledged past escalate_after: escalated',
          );
        }
      }
      pass.summaries = this.#summaries(held, facts, now);
    });
    return pass;
  }

  /**
   * Where an event goes: its routes' channels, and, for news of an alert after it fired (a repeat,
   * an acknowledgement, its resolve), the escalation channels of those routes that were told it
   * fires, so a pager that was paged hears the alert through to its end.
   */
  #targets(event: AlertEvent, told: ToldOfPass): RouteTarget[] {
    const targets = this.options.router.route(event.labels, event.severity);
    if (event.kind === 'firing') return targets;
    const seen = new Set(targets.map((t) => t.channel));
    const extra: RouteTarget[] = [];
    for (const { route } of targets) {
      for (const channel of route.escalation?.to ?? []) {
        if (seen.has(channel) || !announced(told.logEntry(event.fingerprint, channel))) continue;
        seen.add(channel);
        extra.push({ channel, route });
      }
    }
    if (event.kind === 'resolved') extra.push(...this.#toldElsewhere(event, told, seen));
    return [...targets, ...extra];
  }

  /**
   * The channels told an alert fires that its routes no longer take at its end: its severity fell
   * below a route's `min_severity`, a reload changed the routes, its labels changed. Each hears the
   * end too (a pager's incident is closed), under the route that takes the alert there at its worst,
   * else the default route.
   */
  #toldElsewhere(event: AlertEvent, told: ToldOfPass, seen: Set<string>): RouteTarget[] {
    const { router } = this.options;
    const atWorst = router.route(event.labels, 'critical');
    return router.allChannels
      .filter((channel) => !seen.has(channel) && announced(told.logEntry(event.fingerprint, channel)))
      .map((channel) => atWorst.find((t) => t.channel === channel) ?? { channel, route: router.defaultRoute });
  }

  /** Runs the decision stages for one event on one channel, knowing whether its kind shows acknowledgements. */
  #decide(facts: Omit<DecisionFacts, 'showsAcknowledgements'> & { channel: string }): Decided {
    return decideDelivery({ ...facts, showsAcknowledgements: this.options.showsAcknowledgements?.has(facts.channel) });
  }

  /**
   * The body of an event's rows, stored when its first row is written (an event no channel takes
   * stores none) and named by the rows of every other channel: one copy, whatever the channels.
   */
  #bodyOf(content: AlertEvent | NoticeNotification, now: number): () => StoredBody {
    let stored: StoredBody | undefined;
    return () => (stored ??= this.rows.insertBody(JSON.stringify(content), now));
  }

  /** Writes the row of one event on one channel as decided, keeps the log in step and counts it. */
  #write(
    event: AlertEvent,
    body: () => StoredBody,
    channel: string,
    route: ResolvedRoute,
    decided: Decided,
    now: number,
    pass: OutboxPass,
    held: HeldByCause,
  ): void {
    this.rows.insert({
      channel,
      route: route.name,
      source: 'event',
      eventId: event.id,
      fingerprint: event.fingerprint,
      kind: event.kind,
      body: body(),
      groupKey: groupKeyOf(event.labels, route),
      createdAt: now,
      ...rowDecision(decided, now),
    });
    this.#recordLog(event, channel, decided, now);
    this.#count(pass, channel, decided.decision);
    collect(held, channel, event, decided);
  }

  /**
   * Queues a notice (a remediation outcome, a test, the digest) for the given channels, in the
   * caller's transaction. Notices are not routed, grouped or muted: each is one message.
   */
  notice(notification: NoticeNotification, channels: readonly string[], now: number): number[] {
    this.#requireTransaction('notice');
    const body = this.#bodyOf(notification, now);
    const written = channels.map((channel) =>
      this.rows.insert({
        channel,
        route: NOTICE_ROUTE,
        source: 'notice',
        eventId: null,
        fingerprint: null,
        kind: notification.topic,
        body: body(),
        groupKey: '',
        createdAt: now,
        ...rowDecision({ decision: 'deliver' }, now),
      }),
    );
    return written.map((id) => id());
  }

  /**
   * Decides every held row again: when its silence or mute window has ended or its cause has
   * cleared, a row whose alert still fires becomes pending; one whose alert is over resolves
   * quietly. Runs in its own transaction (or the caller's).
   */
  release(now: number): OutboxPass {
    const pass: OutboxPass = { decisions: {}, summaries: 0 };
    this.rows.store.transaction(() => {
      const rows = this.rows.held(now, this.#longestRepeatMs());
      if (rows.length === 0) return;
      this.#sayClockWentBack(rows, now);
      const facts = this.#factsAt(now);
      const held: HeldByCause = new Map();
      // Every open alert of a route repeating slower than the lifecycle may hold a repeat here:
      // their logs are read at once, not one statement per row every round.
      const waiting = rows.map((row) => ({ row, event: JSON.parse(row.payload) as AlertEvent }));
      const told = toldOfPass(
        this.rows,
        waiting.map((w) => w.event),
      );
      for (const { row, event } of waiting) {
        const route = this.options.router.named(row.route) ?? this.options.router.defaultRoute;
        const log = told.logEntry(event.fingerprint, row.channel);
        let decided: Decided;
        const alert = facts.open.get(event.fingerprint);
        if (event.kind !== 'resolved' && alert?.status !== 'firing') {
          // Over without a resolve reaching this channel (routed elsewhere by changed labels).
          decided = announced(log)
            ? { decision: 'superseded', detail: 'the alert is no longer firing' }
            : { decision: 'resolved_quietly', detail: 'the alert ended while held' };
        } else if ((event.unanswered || event.kind === 'repeat') && alert?.acknowledgement) {
          // An escalation or a repeat held (a mute window, its route's interval) until someone took
          // the alert: nobody to wake or remind any more.
          decided = { decision: 'superseded', detail: `acknowledged by ${alert.acknowledgement.by}` };
        } else {
          decided = this.#decide({ event, channel: row.channel, route, now, log, ...this.#holdsOf(facts, event) });
        }
        if (decided.decision === row.decision && (decided.cause?.fingerprint ?? null) === row.heldBy) {
          // The same decision; a repeat's wait may have moved (the channel was told something since).
          if ((decided.until ?? null) !== row.nextAttemptAt) this.rows.redecide(row.id, rowDecision(decided, now), now);
          continue;
        }
        this.rows.redecide(row.id, rowDecision(decided, now), now);
        this.#recordLog(event, row.channel, decided, now);
        told.written(event.fingerprint);
        this.#count(pass, row.channel, decided.decision);
        collect(held, row.channel, event, decided);
      }
      pass.summaries = this.#summaries(held, facts, now);
    });
    this.#logPass('re-decided held notifications', undefined, pass);
    return pass;
  }

  /**
   * Routes the events written outside a cycle (acknowledgements, from the console, the CLI or
   * Slack: `unrouted_events`) and forgets them, in one transaction (or the caller's), so each is
   * routed once whichever process wrote it. Runs at the start of every delivery round.
   */
  routeQueued(now: number): OutboxPass {
    return this.rows.store.transaction(() => {
      const queued = this.rows.unrouted();
      const events = queued.flatMap((q) => (q.event ? [q.event] : []));
      // None queued (most rounds): enqueue answers an empty pass at once, and nothing is forgotten.
      const pass = this.enqueue(events, now);
      this.rows.forgetUnrouted(queued.map((q) => q.eventId));
      return pass;
    });
  }

  /** The longest a repeat is held for its route's interval: the longest finite interval of any route. */
  #longestRepeatMs(): number {
    return Math.max(
      0,
      ...this.options.router.all().flatMap((r) => (Number.isFinite(r.repeatIntervalMs) ? [r.repeatIntervalMs] : [])),
    );
  }

  /**
   * Says, at warn and once a pass, which held repeats wait longer than their route's interval: the
   * clock went back since, and they are decided again now (`repeatNotDue` lets them go).
   */
  #sayClockWentBack(rows: readonly OutboxRow[], now: number): void {
    const early = rows.flatMap(({ route: name, nextAttemptAt: at }) => {
      const route = this.options.router.named(name) ?? this.options.router.defaultRoute;
      return at !== null && clockWentBack(at, now, route.repeatIntervalMs) ? [at] : [];
    });
    warnWaitsEndEarly(this.#log, 'held repeats are decided again early', early, now);
  }

  /** What may hold an event back on any of its channels: a silence, an inhibition, its context being read. */
  #holdsOf(facts: PassFacts, event: AlertEvent): Pick<DecisionFacts, 'silenceId' | 'cause' | 'contextPending'> {
    return {
      silenceId: facts.silenceOf(event.labels),
      cause: facts.inhibitor.causeFor(event),
      contextPending: this.options.context?.pending(event),
    };
  }

  #factsAt(now: number): PassFacts {
    const open = alertStoreOf(this.rows.store).open();
    return {
      inhibitor: new Inhibitor(this.options.settings.inhibit, open),
      silenceOf: this.options.silencesAt(now),
      open: new Map(open.map((a) => [a.fingerprint, a])),
    };
  }

  /**
   * Keeps the notification log in step with what each channel is (or will be) told of the alert's
   * life. An acknowledgement is not part of it: it neither restarts a route's repeat interval nor
   * stands for the alert having been announced.
   */
  #recordLog(event: AlertEvent, channel: string, decided: Decided, now: number): void {
    if (isAcknowledgementKind(event.kind)) return;
    const status = STATUS_OF_DECISION[decided.decision];
    if (status === 'pending') this.rows.logAnnounced(event.fingerprint, channel, event.kind, now);
    // A resolve decided any other final way still closes the alert's life on that channel.
    else if (status === 'suppressed' && event.kind === 'resolved') this.rows.logClosed(event.fingerprint, channel);
  }

  /**
   * The inhibition summaries of a pass: one notice per (channel, cause) for the whole time the
   * cause fires, not one per cycle or job that holds something new. It lists every row the cause
   * holds on that channel, and is sent again only after the channel heard the cause again (its
   * repeat or escalation), so the count it gives is fresh when it is said. Recorded in the
   * notification log under {@link inhibitLogKey}, closed when the cause resolves.
   *
   * None for `api_unreadable`: the cause's own message already says the API cannot be read, and
   * what it holds are the same outage seen by other jobs. None for `app_maintenance`: the app is
   * out of service on purpose, often before its own alert fires (a pending one is the cause), and
   * a notice would page for what the rule keeps quiet. None when the cause itself is silenced.
   */
  #summaries(held: HeldByCause, facts: { silenceOf: SilenceLookup; open: Map<string, AlertRow> }, now: number): number {
    let n = 0;
    for (const [channel, causes] of held) {
      for (const cause of causes.values()) {
        if (cause.rule === 'api_unreadable' || cause.rule === 'app_maintenance') continue;
        const causeAlert = facts.open.get(cause.fingerprint);
        if (causeAlert && facts.silenceOf(causeAlert.labels)) continue;
        const key = inhibitLogKey(cause.fingerprint);
        const said = this.rows.logEntry(key, channel);
        const causeTold = this.rows.logEntry(cause.fingerprint, channel);
        const causeRetold = said !== undefined && causeTold !== undefined && causeTold.announcedAt > said.announcedAt;
        if (announced(said) && !causeRetold) continue;
        const events = this.rows.heldBy(cause.fingerprint, channel).map((r) => JSON.parse(r.payload) as AlertEvent);
        this.notice(inhibitionSummary(cause, events, this.options.settings.max_items_per_message), [channel], now);
        this.rows.logAnnounced(key, channel, 'firing', now);
        n++;
      }
    }
    return n;
  }

  #count(pass: OutboxPass, channel: string, decision: NotifyDecision): void {
    pass.decisions[decision] = (pass.decisions[decision] ?? 0) + 1;
    if (decision !== 'deliver') this.options.metrics?.notifications.inc({ channel, outcome: decision });
  }

  #logPass(msg: string, events: number | undefined, pass: OutboxPass): void {
    if (Object.keys(pass.decisions).length === 0) return;
    this.#log.debug({ events, decisions: pass.decisions, summaries: pass.summaries }, msg);
  }

  #requireTransaction(what: string): void {
    if (!this.rows.db.inTransaction) {
      throw new Error(
        `outbox.${what} must run inside store.transaction(...) so the change and its notifications commit together`,
      );
    }
  }
}

/** What a decision makes of a row: a row due is pending from `now`, any other neither due nor tried. */
function rowDecision(decided: Decided, now: number) {
  const status = STATUS_OF_DECISION[decided.decision];
  const due = status === 'pending' ? now : null;
  return {
    status,
    decision: decided.decision,
    detail: decided.detail ?? null,
    heldBy: decided.cause?.fingerprint ?? null,
    dueSince: due,
    // A held row's: when it is next decided again (`release`); null, every round.
    nextAttemptAt: due ?? decided.until ?? null,
  };
}

/** The group an event's message belongs to on a route: the values of its `group_by` labels, as JSON. */
function groupKeyOf(labels: Labels, route: ResolvedRoute): string {
  const values = route.groupBy.flatMap((key) => (labels[key] ? [[key, labels[key]] as const] : []));
  return JSON.stringify(Object.fromEntries(values));
}

/** Whether the alert is firing in the life the event was written in. */
function firingInLife(alert: AlertRow | undefined, event: AlertEvent): boolean {
  return (
    alert?.status === 'firing' && alert.firedAt !== null && new Date(alert.firedAt).toISOString() === event.startsAt
  );
}

/**
 * Counts a row a cause holds toward its summary. A held resolve is none: an alert's end pages
 * nobody, so it alone is no reason to say what the cause holds back.
 */
function collect(held: HeldByCause, channel: string, event: AlertEvent, decided: Decided): void {
  const cause = decided.cause;
  if (decided.decision !== 'inhibited' || !cause || event.kind === 'resolved') return;
  getOrAdd(held, channel, () => new Map()).set(cause.fingerprint, cause);
}

/**
 * The notice that stands for the alerts one cause holds back on one channel: as severe as the
 * worst of them still firing (a critical held under a server is not announced as a warning), `info`
 * when none is.
 */
export function inhibitionSummary(
  cause: InhibitionCause,
  events: readonly AlertEvent[],
  maxItems: number,
): NoticeNotification {
  const shown = events.slice(0, maxItems);
  const lines = shown.map((e) => `${e.kind === 'resolved' ? 'resolved' : e.severity}: ${e.summary}`);
  if (events.length > shown.length) lines.push(`and ${events.length - shown.length} more`);
  const what = WHY_HELD[cause.rule];
  return {
    type: 'notice',
    topic: 'inhibition',
    title: `${events.length} alert${events.length === 1 ? '' : 's'} held back: ${cause.summary}`,
    severity: worstFiring(events),
    fields: [
      { label: 'Cause', value: cause.summary },
      { label: 'Why held', value: `${what} (${cause.rule})` },
      { label: 'Held', value: String(events.length) },
    ],
    lines: [...lines, 'They are announced if still firing when the cause clears, and resolve quietly if not.'],
  };
}

/** Why a rule holds alerts back, as its summary says it. */
const WHY_HELD: Record<InhibitionCause['rule'], string> = {
  bad_servers: 'the server is in a bad state',
  app_down: 'the app is down: its URLs follow from it',
  app_maintenance: 'the app is out of service on purpose (maintenance or upgrade standby)',
  api_unreadable: 'the API cannot be read',
};

/** What the notification log and the held rows say of one pass's alerts (see {@link toldOfPass}). */
type ToldOfPass = Pick<OutboxStore, 'logEntry' | 'heldFor'> & {
  /** The pass wrote rows or log entries for this alert: ask the state of it from now on. */
  written(fingerprint: string): void;
};

/**
 * The notification log and held rows of a pass's alerts, read for all of them at the start (one
 * read per 500 events) instead of per event and channel, each of which is a wait of the main
 * thread on PostgreSQL: a storm of 10,000 events on two channels was 40,000 of them. An alert the
 * pass has written for is asked of the state again, as its log and rows may have changed since.
 */
function toldOfPass(rows: OutboxStore, events: readonly AlertEvent[]): ToldOfPass {
  const fingerprints = events.map((e) => e.fingerprint);
  const logs = rows.logEntriesAmong(fingerprints);
  const held = rows.heldAmong(fingerprints);
  const written = new Set<string>();
  return {
    logEntry: (fingerprint, channel) =>
      written.has(fingerprint) ? rows.logEntry(fingerprint, channel) : logs.get(fingerprint)?.get(channel),
    heldFor: (fingerprint, channel) =>
      written.has(fingerprint) || held.has(fingerprint) ? rows.heldFor(fingerprint, channel) : [],
    written: (fingerprint) => written.add(fingerprint),
  };
}
