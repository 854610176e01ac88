/**
 * The alert lifecycle: "hear about a problem once when it starts, again only when it matters, and
 * once when it is over". Each cycle diffs one job's complete snapshot of findings against the
 * alert state in SQLite and writes the resulting events.
 *
 * Silences do not touch this state: a silenced alert is still tracked (pending → firing →
 * resolved) so that, when the silence ends, nothing is re-announced that was already known and
 * nothing is forgotten. Muting delivery is the notify router's job (`activeSilenceFor`).
 *
 * An acknowledgement (`acknowledge.ts`) does touch it: an acknowledged alert writes no `repeat`,
 * and an escalation or a resolve ends the acknowledgement, the event saying which one it ended.
 */
import { clockWentBack, warnWaitsEndEarly } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { JobKey } from './job-key.js';
import type { Store } from '../state/store.js';
import type { AlertEvent, AlertEventKind } from './alert-event.js';
import {
  acknowledgementNote,
  alertStoreOf,
  eventOf,
  type AlertHold,
  type AlertRow,
  type AlertStore,
} from './alert-store.js';
import { RESOLVED_SUMMARY, UNDERWAY_SINCE, type Finding } from '../detectors/finding.js';
import { SEVERITY_RANK, type Fact, type Severity } from '../lib/alert-vocabulary.js';
import { decide, FOLDED_REASON, type Decision, type LifecycleOptions } from './decide.js';
import type { FoldedFinding } from '../detectors/detector-result.js';
import { guardResolutions, type ResolveGuardDecision, type ResolveGuardOptions } from './resolve-guard.js';
import { HELD_REASON_DETAIL, heldNote, withHeldNote, type HeldSubjects } from './held-subjects.js';

/** One job's complete snapshot of findings at one moment. */
export interface LifecycleInput {
  /** The job whose snapshot this is; only its own alerts can be resolved by it. */
  job: JobKey;
  /** Every finding of a COMPLETE snapshot. A snapshot that failed to read must not get here. */
  findings: readonly Finding[];
  /**
   * What the detectors could not see whole this cycle: a prefix ending in `/` (a truncated
   * attention section, `attention/<rule>/`) or one whole fingerprint (an attention item folded into
   * another check's alert). An open alert it covers that is absent from `findings` is left exactly
   * as it is: neither resolved nor dropped, since it may only not have been listed.
   */
  incomplete?: readonly string[];
  /**
   * Problems another alert of ours reports now (an attention item about a record a check of ours
   * has an alert on), by fingerprint, with the alert each went into. An open alert among them ends
   * here, whatever `incomplete` says: pending, it is forgotten without a word (its hold has no
   * reason left); firing, it resolves as "folded into …" ({@link FOLDED_REASON}), which the notify
   * stage sends to no channel a page would go to: the problem goes on, told once, in that alert.
   */
  folded?: readonly FoldedFinding[];
  now: number;
  /** Why an alert this snapshot resolves is over, when its check can tell (`AlertEvent.resolution`). */
  explain?: (alert: AlertRow) => string | null;
  /**
   * The subjects of records the read set aside (`held-subjects.ts`): an open alert about one is held
   * (never resolved nor dropped while absent), and its finding or stored row carries the note why,
   * written without an event: a record that became unreadable is no news to page about.
   */
  held?: HeldSubjects;
  /**
   * Why the read was cut short by a hard bound (a partial read, `app/partial-cycle.ts`): each open
   * alert that `incomplete` covers and the findings do not name is held with this note ("not read:
   * …; held, not resolved"), as a set-aside record's is. Absent: a complete read.
   */
  cut?: string;
  /**
   * Told of each firing alert whose record began being worked on again this cycle (a failed run
   * retried: a new `UNDERWAY_SINCE`), with its row as written: no event, but a channel that keeps a
   * message per alert says it there ("retrying since 10:42, step install_modules").
   */
  onUnderway?: (alert: AlertRow) => void;
}

const EVENT_OF: Partial<Record<Decision['action'], AlertEventKind>> = {
  fire: 'firing',
  repeat: 'repeat',
  escalate: 'escalated',
  resolve: 'resolved',
};

/** Options of {@link applyFindings}: the lifecycle's rules, and who hears about what it did. */
export interface ApplyOptions extends LifecycleOptions {
  logger?: Logger;
  /** The resolve guard (`alerts.resolve_guard`); absent: every resolution goes ahead. */
  resolveGuard?: ResolveGuardOptions;
  /** Told what the guard decided, every cycle it is asked (plausible cycles included). */
  onResolveGuard?: (report: ResolveGuardReport) => void;
}

/** What the resolve guard decided about one cycle of one job. */
export interface ResolveGuardReport {
  job: string;
  /** Firing alerts of the job before the cycle. */
  firing: number;
  /** How many the cycle would resolve (held, or resolved once confirmed). */
  resolving: number;
  decision: ResolveGuardDecision;
}

/**
 * Applies one complete snapshot and returns the events written (with their row ids), in order.
 *
 * Must be called inside a transaction the caller opened, so the alert state, these events and
 * their outbox rows commit together or not at all: `commitFindings` (the daemon's one sink) does
 * that. Called outside one it throws rather than risk announcing an event that was never stored.
 *
 * Pass an {@link AlertStore} (built once by the composition root) to reuse its prepared
 * statements; a bare {@link Store} works too and prepares them for this call.
 */
export function applyFindings(store: Store | AlertStore, input: LifecycleInput, options: ApplyOptions): AlertEvent[] {
  const alerts = alertStoreOf(store);
  if (!alerts.store.db.inTransaction) {
    throw new Error(
      'applyFindings must run inside store.transaction(...) so alert state, events and outbox rows commit together',
    );
  }
  const { job, now } = input;
  const open = alerts.openByJob(job);
  // Open under another job: asked once for all new fingerprints, so no new alert waits on a read.
  const elsewhere = alerts.openAmong(input.findings.filter((f) => !open.has(f.fingerprint)).map((f) => f.fingerprint));
  /** The events written, each read back with its row id once every write is made (see `insertEvent`). */
  const events: (() => AlertEvent)[] = [];
  const seen = new Set<string>();
  // Open alerts seen again unchanged (firing with nothing to say, or still pending): the common
  // case, written in one statement at the end.
  const unchanged: string[] = [];
  /** When the open alerts whose times moved back with the clock were last seen. */
  const stepped: number[] = [];

  for (const found of input.findings) {
    const finding = withHeldNote(found, heldNote(input.held, found));
    // Judged without the record that decides it (an app's newest backup): nothing new is told.
    if (finding.details[HELD_REASON_DETAIL] === 'undecided' && !open.has(finding.fingerprint)) continue;
    if (seen.has(finding.fingerprint)) {
      // A detector bug; keeping the first keeps the cycle deterministic.
      options.logger?.warn(
        { job, fingerprint: finding.fingerprint },
        'duplicate fingerprint in one snapshot; kept the first',
      );
      continue;
    }
    seen.add(finding.fingerprint);
    const stored = open.get(finding.fingerprint);
    const previous = stored && afterClockWentBack(stored, now);
    if (stored && previous !== stored) stepped.push(stored.lastSeenAt);
    const decision = decide(previous, finding, now, options, toldSeverity(alerts, previous, finding));
    if (previous && previous === stored && seenAgain(previous, decision) && sameContent(previous, finding)) {
      // A pending alert's hold follows its finding (a reloaded `hold_for`), written only if it moved.
      if (decision.action === 'pend') keepHold(alerts, previous, finding);
      unchanged.push(finding.fingerprint);
      continue;
    }
    if (!previous && elsewhere.has(finding.fingerprint)) {
      options.logger?.warn(
        { job, fingerprint: finding.fingerprint },
        'fingerprint is open under another job; ignored in this snapshot',
      );
      continue;
    }
    const row = nextRow(previous, finding, decision, job, now);
    const pending = row.status === 'pending';
    if (previous) {
      alerts.updateOpen(row);
      if (pending) keepHold(alerts, previous, finding);
    } else {
      // Its hold goes with it, so a resolved life's row keeps none of the old one.
      alerts.startLife({ ...row, hold: pending ? holdOf(finding, now) : null });
    }
    if (!pending && beganUnderway(previous, finding)) input.onUnderway?.(row);
    // Escalated: news the person who took it has not seen, so theirs is over.
    const cleared = decision.action === 'escalate' ? previous?.acknowledgement : undefined;
    if (cleared) alerts.setAcknowledgement(finding.fingerprint, null);
    const kind = EVENT_OF[decision.action];
    if (kind) events.push(alerts.insertEvent(withCleared(eventOf(row, kind, now, decision.reason), cleared), now));
  }

  alerts.touch(unchanged, now);
  const moved = `${job} alerts' holds and repeats go on from their last sighting`;
  if (options.logger) warnWaitsEndEarly(options.logger, moved, stepped, now);

  const unseen = input.incomplete ?? [];
  let kept = 0;
  const resolving: { row: AlertRow; reason: Decision['reason'] }[] = [];
  const folded = new Map((input.folded ?? []).map((f) => [f.fingerprint, f]));
  for (const previous of open.values()) {
    if (seen.has(previous.fingerprint)) continue;
    const into = folded.get(previous.fingerprint);
    if (into) {
      events.push(...foldInto(alerts, previous, into, now));
      continue;
    }
    const covered = unseen.some((part) => covers(part, previous.fingerprint));
    // Not read this cycle (a cut read), or its record set aside: held, and saying why.
    const note = heldNote(input.held, previous) ?? (covered ? cutNote(input.cut) : undefined);
    if (covered || note !== undefined) {
      kept++;
      const noted = note === undefined ? previous : withHeldNote(previous, note);
      if (noted !== previous) alerts.updateOpen({ ...noted, lastSeenAt: now });
      continue;
    }
    const decision = decide(previous, undefined, now, options);
    if (decision.action === 'resolve') {
      resolving.push({ row: previous, reason: decision.reason });
    } else if (decision.action === 'drop') {
      alerts.drop(previous.fingerprint);
    }
  }
  if (kept > 0)
    options.logger?.debug(
      { job, kept, incomplete: unseen },
      'alerts not listed by an incomplete part of the snapshot kept open',
    );
  if (resolving.length > 0 || options.resolveGuard) {
    const firing = [...open.values()].filter((a) => a.status === 'firing').length;
    if (holdResolutions(alerts, job, firing, resolving.length, options)) return events.map((written) => written());
  }
  for (const { row: held, reason } of resolving) {
    // Read whole and over: a note that it was held (unreadable, not reached) no longer holds.
    const previous = withHeldNote(held, undefined);
    if (previous !== held) alerts.updateOpen(previous);
    events.push(resolveAlert(alerts, previous, now, reason, input.explain?.(previous) ?? null));
  }
  return events.map((written) => written());
}

/**
 * Ends an open alert folded into another one: a pending one is forgotten (its wait is over, the
 * problem is told by the other alert), a firing one resolves saying which alert carries it on.
 * Not asked of the resolve guard: the item is still listed, the answer is no implausible empty one.
 */
function foldInto(alerts: AlertStore, previous: AlertRow, into: FoldedFinding, now: number): (() => AlertEvent)[] {
  if (previous.status !== 'firing') {
    alerts.drop(previous.fingerprint);
    return [];
  }
  const resolution = `folded into our ${into.into ?? 'own'} alert, which reports the same record and carries it on`;
  return [resolveAlert(alerts, previous, now, FOLDED_REASON, resolution)];
}

/** Resolves an open alert and writes its `resolved` event, saying which acknowledgement it ended. */
function resolveAlert(alerts: AlertStore, previous: AlertRow, now: number, reason: string, resolution: string | null) {
  // Said as over, in its event and its row: what was wrong, not the retry running when it ended.
  const summary = previous.details[RESOLVED_SUMMARY] ?? previous.summary;
  if (summary !== previous.summary) alerts.updateOpen({ ...previous, summary });
  alerts.resolve(previous.fingerprint, now);
  const row: AlertRow = { ...previous, summary, status: 'resolved', resolvedAt: now };
  const event = withCleared(eventOf(row, 'resolved', now, reason, resolution), previous.acknowledgement);
  return alerts.insertEvent(event, now);
}

/**
 * An open alert last seen further ahead than now (the clock went back since: NTP, a VM restored),
 * its times moved back as far, so that its hold and its repeat interval do not last the step too.
 * The time between its last sighting and the step cannot be known, and counts as none.
 */
function afterClockWentBack(row: AlertRow, now: number): AlertRow {
  if (!clockWentBack(row.lastSeenAt, now, 0)) return row;
  const step = row.lastSeenAt - now;
  const back = (t: number | null) => (t === null ? null : t - step);
  const { firstSeenAt, firedAt, lastNotifiedAt } = row;
  return { ...row, firstSeenAt: firstSeenAt - step, firedAt: back(firedAt), lastNotifiedAt: back(lastNotifiedAt) };
}

/**
 * Keeps what an open pending alert waits for with it (`alerts` and the console say it), written
 * only when it changes: its hold from the first sighting of this life (see {@link holdOf}).
 */
function keepHold(alerts: AlertStore, previous: AlertRow, finding: Finding): void {
  const hold = holdOf(finding, previous.firstSeenAt);
  if (hold?.until === previous.hold?.until && hold?.reason === previous.hold?.reason) return;
  alerts.setHold(finding.fingerprint, hold);
}

/**
 * What a pending alert first seen at `firstSeenAt` waits for: its record being worked on again (no
 * end time), the finding's hold, or none.
 */
function holdOf(finding: Finding, firstSeenAt: number): AlertHold | null {
  // A record worked on again waits for the outcome, not a clock: held with no end while it lasts.
  if (finding.underway) return { until: null, reason: finding.holdReason ?? 'its record is being worked on again' };
  return finding.holdForMs ? { until: firstSeenAt + finding.holdForMs, reason: finding.holdReason ?? null } : null;
}

/**
 * The worst severity a firing alert was announced at in this life, asked of its events only when
 * the finding is worse than the row (its severity rose, perhaps back to what was told): rare.
 */
function toldSeverity(alerts: AlertStore, previous: AlertRow | undefined, finding: Finding): Severity | undefined {
  if (previous?.status !== 'firing' || SEVERITY_RANK[finding.severity] <= SEVERITY_RANK[previous.severity]) {
    return undefined;
  }
  return alerts.toldSeverity(previous);
}

/** The note an alert a cut read did not reach is held with; undefined for a complete read. */
function cutNote(cut: string | undefined): string | undefined {
  return cut === undefined ? undefined : `not read: ${cut}; held, not resolved`;
}

/** Whether a firing alert's record began a new spell of work on it this sighting (a retry started). */
function beganUnderway(previous: AlertRow | undefined, finding: Finding): boolean {
  const since = finding.details[UNDERWAY_SINCE];
  return (
    previous?.status === 'firing' &&
    finding.underway === true &&
    since !== undefined &&
    previous.details[UNDERWAY_SINCE] !== since
  );
}

/** The event, saying which acknowledgement it ended (its row's already cleared), if one. */
function withCleared(event: Omit<AlertEvent, 'id'>, cleared: AlertRow['acknowledgement'] | undefined) {
  return cleared ? { ...event, acknowledgementCleared: acknowledgementNote(cleared) } : event;
}

/**
 * Asks the resolve guard about this cycle's resolutions (none without `options.resolveGuard`),
 * keeps its count of suspect cycles, and tells `onResolveGuard`. True: resolve nothing now.
 */
function holdResolutions(
  alerts: AlertStore,
  job: string,
  firing: number,
  resolving: number,
  options: ApplyOptions,
): boolean {
  const guard = options.resolveGuard;
  if (!guard) return false;
  const suspectBefore = alerts.suspectCycles(job);
  const decision = guardResolutions({ firing, resolving, suspectBefore }, guard);
  if (decision.suspectCycles !== suspectBefore) alerts.setSuspectCycles(job, decision.suspectCycles);
  options.onResolveGuard?.({ job, firing, resolving, decision });
  return decision.hold;
}

/** The alert row after a present finding's decision. */
function nextRow(
  previous: AlertRow | undefined,
  finding: Finding,
  decision: Decision,
  job: string,
  now: number,
): AlertRow {
  const announced = decision.action === 'fire' || decision.action === 'repeat' || decision.action === 'escalate';
  return {
    fingerprint: finding.fingerprint,
    job: previous?.job ?? job,
    check: finding.check,
    status: decision.action === 'pend' ? 'pending' : 'firing',
    severity: finding.severity,
    summary: finding.summary,
    details: finding.details,
    labels: finding.labels,
    url: finding.url ?? null,
    since: finding.since ?? null,
    subject: finding.subject ?? null,
    facts: finding.facts,
    brief: finding.brief ?? null,
    firstSeenAt: previous?.firstSeenAt ?? now,
    lastSeenAt: now,
    seenCount: (previous?.seenCount ?? 0) + 1,
    firedAt: decision.action === 'fire' ? now : (previous?.firedAt ?? null),
    lastNotifiedAt: announced ? now : (previous?.lastNotifiedAt ?? null),
    resolvedAt: null,
    acknowledgement: decision.action === 'escalate' ? null : (previous?.acknowledgement ?? null),
  };
}

/**
 * Whether a sighting changes nothing but the alert's last sighting and count: a firing alert with
 * nothing to announce, or a pending one still waiting.
 */
function seenAgain(previous: AlertRow, decision: Decision): boolean {
  return decision.action === 'none' || (decision.action === 'pend' && previous.status === 'pending');
}

/** True when an open alert's stored content already says what the finding says. */
function sameContent(row: AlertRow, finding: Finding): boolean {
  return (
    row.severity === finding.severity &&
    row.summary === finding.summary &&
    row.url === (finding.url ?? null) &&
    row.since === (finding.since ?? null) &&
    row.subject?.type === finding.subject?.type &&
    row.subject?.id === finding.subject?.id &&
    row.brief === (finding.brief ?? null) &&
    sameRecord(row.details, finding.details) &&
    sameRecord(row.labels, finding.labels) &&
    sameFacts(row.facts, finding.facts)
  );
}

/**
 * The same facts in the same order. A row without any (stored before alerts kept them) differs, so
 * the first sighting after the upgrade writes them.
 */
function sameFacts(stored: readonly Fact[] | null, facts: readonly Fact[]): boolean {
  return (
    stored !== null &&
    stored.length === facts.length &&
    stored.every((f, i) => f.label === facts[i]!.label && f.value === facts[i]!.value && f.kind === facts[i]!.kind)
  );
}

/**
 * Flat string maps equal, in the same key order (order is what messages show). Keys whose value is
 * undefined do not count: JSON storage drops them.
 */
function sameRecord(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/**
 * Whether an entry of `incomplete` covers a fingerprint: a prefix ending in `/` covers all below
 * it; anything else only itself (`attention/r/url/id/5` must not cover `attention/r/url/id/55`).
 */
export function covers(part: string, fingerprint: string): boolean {
  return part.endsWith('/') ? fingerprint.startsWith(part) : fingerprint === part;
}
