/**
 * The daily digest: once a day per channel, at `notify.digest.at` in its time zone, one notice of
 * what is open, what opened and resolved in the last 24 hours, and what remediation did. Each
 * channel sees the alerts its routes would send it. The (channel, local day) is claimed in
 * SQLite in the same transaction as the outbox row, so a restart never sends a day's digest twice;
 * a daemon that was down at the set time sends that day's digest once when it comes back.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import { alertStoreOf, type AlertRow } from '../alerts/alert-store.js';
import { compileMatchers } from '../alerts/matchers.js';
import { describeMatchers, silencesInForceDuring, type Silence } from '../alerts/silences.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import type { Labels, Severity } from '../lib/alert-vocabulary.js';
import { formatUtc } from '../lib/format-utc.js';
import type { NoticeNotification } from './channels/channel.js';
import { localTimeReader, minuteOf } from './mute-windows.js';
import type { DigestSettings } from './notify-settings.js';
import type { Outbox } from './outbox.js';
import type { Router } from './router.js';
import type { Store } from '../state/store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the digest needs. */
export interface DigestOptions {
  settings: DigestSettings;
  outbox: Outbox;
  router: Router;
  /** Lines listed per section before "and N more". */
  maxItems: number;
  /**
   * What remediation did after a time, a line each (the runtime gives it: notify does not read
   * remediation's table). Absent: the digest has no remediation section.
   */
  remediationSince?: (since: number) => readonly string[];
  logger?: Logger;
}

/** Queues the daily digests that are due. */
export class Digest {
  readonly #localTime: ReturnType<typeof localTimeReader>;
  readonly #atMinute: number;
  readonly #channels: readonly string[];
  readonly #log: Logger;

  constructor(private readonly options: DigestOptions) {
    this.#localTime = localTimeReader(options.settings.time_zone);
    this.#atMinute = minuteOf(options.settings.at);
    // `settings.channels` empty means every configured channel.
    this.#channels = options.settings.channels.length > 0 ? options.settings.channels : options.router.allChannels;
    this.#log = options.logger ?? silentLogger;
  }

  /**
   * Queues today's digest for each channel whose time has come and that has not had it yet.
   * Must run inside a transaction (the delivery loop's housekeeping). Answers how many were queued.
   */
  enqueueDue(now: number): number {
    if (!this.options.settings.enabled) return 0;
    const local = this.#localTime(now);
    if (local.minute < this.#atMinute) return 0;
    let queued = 0;
    for (const channel of this.#channels) {
      if (!this.options.outbox.rows.claimDigest(channel, local.date, now)) continue;
      this.options.outbox.notice(this.build(channel, now, local.date), [channel], now);
      queued++;
      this.#log.info({ channel, day: local.date }, 'daily digest queued');
    }
    return queued;
  }

  /** The digest notice for one channel at `now` (`day` is the local date shown in the title). */
  build(channel: string, now: number, day: string): NoticeNotification {
    const { router, maxItems, outbox } = this.options;
    const mine = (a: { labels: Labels; severity: Severity }) =>
      router.route(a.labels, a.severity).some((t) => t.channel === channel);
    const alerts = alertStoreOf(outbox.rows.store);
    const open = alerts.open().filter((a) => a.status === 'firing' && mine(a));
    const since = now - DAY_MS;
    // The day's events: the alerts opened and resolved, and with the repeats, what the silences held.
    const events = alerts.eventsSince(since, ['firing', 'repeat', 'resolved']).filter(mine);
    const opened = events.filter((e) => e.kind === 'firing');
    const resolved = events.filter((e) => e.kind === 'resolved');
    const remediation = this.options.remediationSince?.(since) ?? [];
    const held = silencesHeld(outbox.rows.store, since, now, open, events);
    const worst = open.some((a) => a.severity === 'critical') ? 'critical' : open.length > 0 ? 'warning' : 'ok';

    const lines: string[] = [];
    const section = <T>(title: string, items: readonly T[], line: (item: T) => string) => {
      if (items.length === 0) return;
      lines.push(`${title}:`);
      for (const item of items.slice(0, maxItems)) lines.push(`• ${line(item)}`);
      if (items.length > maxItems) lines.push(`and ${items.length - maxItems} more`);
    };
    section('Open', open, (a) => `${a.severity}: ${a.summary} (since ${formatUtc(a.firedAt ?? a.firstSeenAt)})`);
    section('Opened in the last 24 hours', opened, (e) => `${e.severity}: ${e.summary}`);
    section('Resolved in the last 24 hours', resolved, (e) => e.summary);
    section('Remediation in the last 24 hours', remediation, (line) => line);
    section('Silences in the last 24 hours', held, silenceLine);
    if (lines.length === 0) lines.push('Nothing open, nothing opened or resolved in the last 24 hours.');

    return {
      type: 'notice',
      topic: 'digest',
      title: `Daily digest ${day}: ${open.length} open, ${opened.length} opened, ${resolved.length} resolved`,
      severity: worst,
      fields: [
        { label: 'Open', value: String(open.length) },
        { label: 'Opened (24h)', value: String(opened.length) },
        { label: 'Resolved (24h)', value: String(resolved.length) },
        { label: 'Remediation (24h)', value: String(remediation.length) },
        ...(held.length > 0 ? [{ label: 'Silences (24h)', value: String(held.length) }] : []),
      ],
      lines,
    };
  }
}

/** A silence in force during the digest's day, with the channel's alerts that fired under it. */
interface SilenceHeld {
  silence: Silence;
  /** When it was in force within the day. */
  from: number;
  to: number;
  /** The summaries of the alerts it matched while they fired in that time, first fired first. */
  alerts: string[];
}

/** Alerts named per silence before "and N more". */
const HELD_NAMED = 3;

/**
 * What each silence in force at some time of [since, now) held: the alerts matching it that fired
 * while it was in force (a maintenance window's whole catch, scheduled or not). The alerts are
 * the channel's, open now or with an event in the day.
 */
function silencesHeld(
  store: Store,
  since: number,
  now: number,
  open: readonly AlertRow[],
  events: readonly AlertEvent[],
): SilenceHeld[] {
  const silences = silencesInForceDuring(store, since, now);
  if (silences.length === 0) return [];
  // Each life of an alert once: from when it fired to when it ended (open: not yet).
  const lives = new Map<string, { labels: Labels; summary: string; start: number; end: number }>();
  const lived = (alert: { fingerprint: string; labels: Labels; summary: string }, start: number, end: number) => {
    const key = `${alert.fingerprint}@${start}`;
    lives.set(key, { ...alert, start, end: Math.min(end, lives.get(key)?.end ?? Infinity) });
  };
  for (const a of open) {
    if (a.status === 'firing' && a.firedAt !== null) lived(a, a.firedAt, Infinity);
  }
  for (const e of events) lived(e, Date.parse(e.startsAt), e.endsAt === null ? Infinity : Date.parse(e.endsAt));
  const ordered = [...lives.values()].sort((x, y) => x.start - y.start);
  return silences.map((silence) => {
    const from = Math.max(silence.startsAt, since);
    const ended = silence.expiredAt !== null && silence.expiredAt < silence.endsAt ? silence.expiredAt : silence.endsAt;
    const to = Math.min(ended, now);
    const matches = silence.refused === null ? compileMatchers(silence.matchers) : () => false;
    const alerts = ordered.filter((l) => l.start < to && l.end > from && matches(l.labels)).map((l) => l.summary);
    return { silence, from, to, alerts };
  });
}

/** "1a2b3c4d5e6f app=shop, 02:00–04:00 UTC, by alice (database upgrade): held 2: Problem shop; Problem crm". */
function silenceLine(h: SilenceHeld): string {
  const s = h.silence;
  const named = h.alerts.slice(0, HELD_NAMED).join('; ');
  const more = h.alerts.length > HELD_NAMED ? `; and ${h.alerts.length - HELD_NAMED} more` : '';
  const what = h.alerts.length === 0 ? 'held nothing' : `held ${h.alerts.length}: ${named}${more}`;
  return `${s.id} ${describeMatchers(s.matchers)}, ${formatUtc(h.from)} to ${formatUtc(h.to)}, by ${s.createdBy} (${s.reason}): ${what}`;
}
