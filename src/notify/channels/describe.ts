/**
 * What a message says, worked out once for every channel kind: the headline (severity, counts,
 * what, where), the facts shared by every event, and per event the facts its check chose when it
 * found the problem (carried on the event; the noun of a check is asked of the detector registry,
 * so nothing here knows any check), as plain unescaped text with times kept as times. Each renderer escapes for its own
 * medium (mrkdwn, HTML, a mail header) and formats times its own way (a Slack date token, UTC),
 * so escaping cannot be forgotten in one of them and no raw ISO string reaches a reader.
 *
 * Written for an on-call engineer reading on a phone: a firing event shows where (the labels not
 * shared by the whole message), its check's key facts (not those its summary already says) and
 * since when, with the platform's page of its record; a resolved one says "RESOLVED after 42m",
 * what was wrong as something that *was*, and why it is over where that is known; more than
 * {@link COMPACT_OVER} events become one line each, their durations labelled ("for 47m"). A
 * message says what to do next (its checks' next steps, their runbooks, the silence command) and,
 * when events were left out, where to see them all.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import { formatMatcher } from '../../alerts/matchers.js';
import { silenceMatchersFor } from '../../alerts/silence-matchers.js';
import { presentationOf } from '../../detectors/registry.js';
import { SEVERITY_RANK, type AlertContext, type Fact as ShownFact, type Severity } from '../../lib/alert-vocabulary.js';
import { parseTime } from '../../lib/parse-time.js';
import { formatDuration } from '../../lib/format-duration.js';
import { formatUtc } from '../../lib/format-utc.js';
import { fillPage } from '../../config/link-schema.js';
import { NO_LINKS, pageTypeOf, type MessageLinks } from '../message-links.js';
import type { AlertsNotification, RenderOptions } from './channel.js';
import { commandLine } from './shell-line.js';

/** How a message or event looks at a glance. */
export type Tone = Severity | 'resolved' | 'ok';

/** Emoji and word per tone: the emoji for the eye, the word for screen readers and mail subjects. */
export const TONES: Readonly<Record<Tone, Readonly<{ emoji: string; word: string }>>> = {
  critical: { emoji: '🔴', word: 'CRITICAL' },
  warning: { emoji: '🟠', word: 'WARNING' },
  info: { emoji: '🔵', word: 'INFO' },
  resolved: { emoji: '✅', word: 'RESOLVED' },
  ok: { emoji: '✅', word: 'OK' },
};

/** A message with more events than this lists them one line each. */
export const COMPACT_OVER = 3;

/**
 * What one event shows at most, whatever the service sent: the facts (an attention item is an open
 * record, and one came with 126,000 fields), and the length of its summary and of each fact's value
 * (UTF-16 units). A message is read by a person; past these it says how much it left out.
 */
export const SHOWN_LIMITS = { facts: 40, summary: 4_000, factValue: 1_000 } as const;

/** Next steps and runbooks a message lists at most: one per check is the rule, and a message rarely mixes more. */
export const MAX_NEXT_STEPS = 3;

/** A link of our own making: its label (our words) and an http(s) URL from config, filled with an id. */
export interface Link {
  label: string;
  url: string;
}

/** One fact as shown, e.g. { label: 'Step', value: 'install' }; `at` when the value is a time (ms). */
export interface Fact {
  label: string;
  value: string;
  at?: number;
}

/** The headline of an alerts message. */
export interface Headline {
  tone: Tone;
  /** "2 failed runs", "1 resolved"; all resolved: "3 failed runs" under the RESOLVED tone. */
  counts: string[];
  /** The noun of the first count: "failed runs", "failed run", "alerts". */
  what: string;
  /** Where: the group's values other than the check ("production"); API text, unescaped. */
  scope: string[];
  /**
   * What the message is about when it is about one alert: its app (else its server), so a mail
   * subject or a Slack header names it ("1 failed run: shop"). Null for several, or none named.
   */
  about: string | null;
}

/** Since when a problem exists. */
export interface Since {
  /** ms since the epoch; null when the source's text could not be read (then `utc` is that text). */
  at: number | null;
  /** As a reader sees it: the time in UTC ("2026-11-02 11:55 UTC"), or the source's text when it could not be read. */
  utc: string;
  /** "2h": how long ago; null under a minute (a fresh alert says nothing with "0s ago"). */
  ago: string | null;
}

/** What is shown of one event. All strings are API text, unescaped. */
export interface EventDescription {
  tone: Tone;
  /** "CRITICAL", "CRITICAL · still firing", "ESCALATED to CRITICAL", "RESOLVED after 42m". */
  status: string;
  /** What is wrong; once resolved, what was ("was: Update of shop failed at step install"). */
  summary: string;
  /** The app name, shown as the link to `url`. */
  app: string | null;
  url: string | null;
  /** Labels that say where, left out when the whole message shares them. None when resolved (the app link stays). */
  where: Fact[];
  /** The facts of its check that matter, times as times. None when resolved. */
  facts: Fact[];
  /** Null when resolved (the status says how long it lasted). */
  since: Since | null;
  /** The one-line form: "step restart: database connection refused"; the summary when the check has none. */
  brief: string;
  /** True when `brief` is the summary (which names the app itself). */
  briefIsSummary: boolean;
  /** How long it has been going on, labelled for a one-line form: "for 47m"; null under a minute or resolved. */
  age: string | null;
  /** The platform's page of the record it is about ("Run page"), where `notify.links` has one. */
  page: Link | null;
  /** Resolved: why it is over, as the source says it (`AlertEvent.resolution`); null when unknown. */
  resolution: string | null;
  /** What the API told about it after its cycle (its log, its restore point); null when none was read, or resolved. */
  context: ContextDescription | null;
}

/** What is shown of an alert's context (`AlertEvent.context`). All strings are API text, unescaped. */
export interface ContextDescription {
  /** Facts beside the check's own (restore point, instant undo, backup taken first), times as times. */
  facts: Fact[];
  /** What could not be read, each in a few words ("logs not available: … (plan_required)"). */
  notes: string[];
  /** The log around the failure; null when none was read. */
  log: LogDescription | null;
}

/** A log excerpt as shown: a title of our words, then its lines, error lines first. */
export interface LogDescription {
  /** "Log (setup): 3 of 41 lines around the failure, errors first". */
  title: string;
  lines: {
    /** "12:01:05", the time logged in UTC; null when the service gave none it could read. */
    stamp: string | null;
    /** The line as logged (one line, cut to the configured width): API text. */
    text: string;
  }[];
}

/** What an alerts message says. */
export interface AlertsDescription {
  headline: Headline;
  /** Labels every event of the message shares (not already in the scope): said once, under the headline. */
  shared: Fact[];
  /** One line per event instead of a block each. */
  compact: boolean;
  events: EventDescription[];
  omitted: number;
  /**
   * Where the events left out are listed (when some are): `deploy-watchdog alerts` as a shell
   * line, with the daemon's `--config` when it needs one; null when none are left out or it cannot
   * be shown safely.
   */
  omittedCommand: string | null;
  /** What to do next: the next step of each check with firing events, once each, at most {@link MAX_NEXT_STEPS}. */
  nextSteps: string[];
  /** The runbooks of its routes and of its firing events' checks, once each, at most {@link MAX_NEXT_STEPS}. */
  runbooks: Link[];
  /**
   * The `deploy-watchdog silence …` line that mutes what this message is about, quoted for a POSIX
   * shell and not yet escaped for any medium; null when all resolved or when it cannot be shown
   * safely (see `commandLine`).
   */
  silenceCommand: string | null;
}

/**
 * What describing needs besides the notification and the time: the `--config` the commands a
 * message prints must give, and the platform's pages and the runbooks to link (`ChannelDeps`).
 */
export type DescribeOptions = Pick<RenderOptions, 'commandConfigFile' | 'links'>;

/** Labels that say where, in this order, with their display names. */
const WHERE_LABELS: readonly (readonly [string, string])[] = [
  ['environment_type', 'Environment'],
  ['project', 'Project'],
  ['namespace', 'Namespace'],
  ['server', 'Server'],
];

/** Describes an alerts notification for a reader, with times relative to `now` (ms since the epoch). */
export function describeAlerts(n: AlertsNotification, now: number, options: DescribeOptions = {}): AlertsDescription {
  const links = options.links ?? NO_LINKS;
  const headline = describeHeadline(n);
  const shared = sharedLabels(n.events, headline.scope);
  // Said once for the message: the shared labels, and those the headline's scope already names.
  const sharedKeys = new Set(shared.map((f) => f.label));
  for (const [key, label] of WHERE_LABELS) if (n.group[key]) sharedKeys.add(label);
  const events = n.events.map((e) => describeEvent(e, now, sharedKeys, links));
  const omitted = Math.max(0, n.omitted);
  return {
    headline,
    shared,
    compact: n.events.length > COMPACT_OVER,
    events,
    omitted,
    omittedCommand: omitted > 0 ? commandLine(configured(['alerts'], options.commandConfigFile)).line : null,
    nextSteps: nextSteps(n),
    runbooks: runbooks(n, links),
    silenceCommand: silenceCommand(n, options.commandConfigFile),
  };
}

/** A `deploy-watchdog` command's words, with the daemon's `--config` when it needs one. */
function configured(args: readonly string[], configFile: string | undefined): string[] {
  return ['deploy-watchdog', args[0]!, ...(configFile === undefined ? [] : ['--config', configFile]), ...args.slice(1)];
}

/** The next step of each check with a firing event, in the order they come, each sentence once. */
function nextSteps(n: AlertsNotification): string[] {
  const steps = n.events.filter((e) => e.kind !== 'resolved').map((e) => presentationOf(e.check)?.nextStep?.(e));
  return [...new Set(steps.filter((step): step is string => Boolean(step)))].slice(0, MAX_NEXT_STEPS);
}

/**
 * The runbooks of a message: its routes' (a team's page) first, then its firing events' checks',
 * each URL once. Labelled "Runbook" when there is one, else by what each is for. None when all
 * are resolved: there is nothing left to do.
 */
function runbooks(n: AlertsNotification, links: MessageLinks): Link[] {
  const firing = n.events.filter((e) => e.kind !== 'resolved');
  if (firing.length === 0) return [];
  const checks = [...new Set(firing.map((e) => e.check))];
  const found = [
    ...(n.routes ?? []).map((route) => ({ label: `Runbook: ${route}`, url: links.routeRunbooks[route] })),
    ...checks.map((c) => ({ label: `Runbook: ${presentationOf(c)?.noun[1] ?? c}`, url: links.checkRunbooks[c] })),
  ].filter((r): r is Link => Boolean(r.url));
  const unique = found.filter((r, i) => found.findIndex((o) => o.url === r.url) === i).slice(0, MAX_NEXT_STEPS);
  return unique.length === 1 ? [{ label: 'Runbook', url: unique[0]!.url }] : unique;
}

/** Works out the headline: worst firing severity (or resolved), the counts, the scope. */
export function describeHeadline(n: AlertsNotification): Headline {
  const omittedResolved = Math.min(Math.max(0, n.omittedResolved ?? 0), Math.max(0, n.omitted));
  const firingEvents = n.events.filter((e) => e.kind !== 'resolved');
  const firing = firingEvents.length + Math.max(0, n.omitted) - omittedResolved;
  const resolved = n.events.length - firingEvents.length + omittedResolved;
  // Omitted events are sorted after the shown ones, so the shown ones hold the worst severity.
  const tone: Tone = firing > 0 || n.events.length === 0 ? worstFiring(firingEvents) : 'resolved';
  const checks = new Set(n.events.map((e) => e.check));
  const check = n.group.check ?? (checks.size === 1 ? [...checks][0] : undefined);
  const nouns = (check && presentationOf(check)?.noun) || (['alert', 'alerts'] as const);
  const main = firing > 0 ? firing : resolved;
  const what = main === 1 ? nouns[0] : nouns[1];
  const counts = [`${main} ${what}`, ...(firing > 0 && resolved > 0 ? [`${resolved} resolved`] : [])];
  let scope = Object.entries(n.group)
    .filter(([k, v]) => k !== 'check' && v !== '')
    .map(([, v]) => v);
  if (scope.length === 0) {
    const envs = new Set(n.events.map((e) => e.labels.environment_type));
    const env = envs.size === 1 ? [...envs][0] : undefined;
    if (env) scope = [env];
  }
  const one = n.events.length === 1 && Math.max(0, n.omitted) === 0 ? n.events[0] : undefined;
  const about = one?.labels.app || one?.labels.server || null;
  // A group by app already says it in the scope.
  return { tone, counts, what, scope, about: about && !scope.includes(about) ? about : null };
}

/** The severity of the worst of `events` that is not a resolve; `info` when every one is. */
export function worstFiring(events: readonly AlertEvent[]): Severity {
  let worst: Severity = 'info';
  for (const e of events)
    if (e.kind !== 'resolved' && SEVERITY_RANK[e.severity] > SEVERITY_RANK[worst]) worst = e.severity;
  return worst;
}

/**
 * Describes one event. `shared`: labels (by display name) the message states once for all events;
 * `links`: the platform's pages, for the link to the record the event is about.
 */
export function describeEvent(
  e: AlertEvent,
  now: number,
  shared: ReadonlySet<string> = new Set(),
  links: MessageLinks = NO_LINKS,
): EventDescription {
  // Since when the problem exists: the source's own time where it says, else when the alert fired.
  const startedText = e.since ?? e.startsAt;
  const started = Date.parse(startedText);
  const base = { app: e.labels.app ?? null, url: e.url, page: pageOf(e, links) };
  if (e.kind === 'resolved') {
    const ended = e.endsAt ? Date.parse(e.endsAt) : NaN;
    const lasted = Number.isFinite(ended) && Number.isFinite(started) ? formatDuration(ended - started) : null;
    const status = lasted ? `RESOLVED after ${lasted}` : 'RESOLVED';
    return {
      ...base,
      tone: 'resolved',
      status,
      // What was wrong, said as over: the failure text alone would read as still true.
      summary: `was: ${cutSayingHowMuch(e.summary, SHOWN_LIMITS.summary)}`,
      where: [],
      facts: [],
      since: null,
      // The one-line form (grouped lines) says why too; the full form has it as `resolution`.
      brief: `${lasted ? `resolved after ${lasted}` : 'resolved'}${e.resolution ? `: ${e.resolution}` : ''}`,
      briefIsSummary: false,
      age: null,
      resolution: e.resolution || null,
      context: null,
    };
  }
  const where: Fact[] = [];
  for (const [key, label] of WHERE_LABELS) {
    const v = e.labels[key];
    if (v && !shared.has(label)) where.push({ label, value: v });
  }
  const shown = shownOf(e);
  const summary = cutSayingHowMuch(e.summary, SHOWN_LIMITS.summary);
  const ago = Number.isFinite(started) && now - started >= 60_000 ? formatDuration(now - started) : null;
  const at = Number.isFinite(started) ? started : null;
  const since: Since = { at, utc: at !== null ? formatUtc(at) : startedText, ago };
  return {
    ...base,
    tone: e.severity,
    status: firingStatus(e, TONES[e.severity].word),
    summary,
    where,
    facts: shownFacts(shown.facts, summary),
    since,
    brief: shown.brief === null ? summary : cutSayingHowMuch(shown.brief, SHOWN_LIMITS.summary),
    briefIsSummary: shown.brief === null,
    age: ago ? `for ${ago}` : null,
    resolution: null,
    context: e.context ? describeContext(e.context) : null,
  };
}

/**
 * The facts an event shows, in order: those its summary does not already say, each value cut to
 * {@link SHOWN_LIMITS}, and past the first `facts` of them one line saying how many more there are.
 */
function shownFacts(facts: readonly ShownFact[], summary: string): Fact[] {
  const out: Fact[] = [];
  let more = 0;
  for (const f of facts) {
    if (out.length >= SHOWN_LIMITS.facts) more++;
    else {
      const fact = shownFact(f, cutSayingHowMuch(f.value, SHOWN_LIMITS.factValue));
      if (!saysAlready(summary, fact.value)) out.push(fact);
    }
  }
  if (more > 0) out.push({ label: 'More', value: `${more} more fields not shown` });
  return out;
}

/** `text` cut to at most `max` UTF-16 units (never inside a surrogate pair), saying how much was left out. */
export function cutSayingHowMuch(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} characters more, cut)`;
}

/**
 * The status of an event of a firing alert: "CRITICAL", "ESCALATED to CRITICAL", "WARNING · still
 * firing", "WARNING · acknowledged by alice", "WARNING · acknowledgement given back by bob".
 */
function firingStatus(e: AlertEvent, word: string): string {
  switch (e.kind) {
    case 'escalated':
      return e.unanswered ? escalationStatus(word, e.unanswered) : `ESCALATED to ${word}`;
    case 'repeat':
      return `${word} · still firing`;
    case 'acknowledged':
      return `${word} · acknowledged by ${e.acknowledgement?.by ?? 'someone'}`;
    case 'unacknowledged':
      return `${word} · acknowledgement given back by ${e.acknowledgement?.by ?? 'someone'}`;
    default:
      return word;
  }
}

/** "CRITICAL · unacknowledged for 15m, escalated (told before: ops-slack, ops-mail)". */
function escalationStatus(word: string, note: NonNullable<AlertEvent['unanswered']>): string {
  const before = note.toldBefore.length > 0 ? note.toldBefore.join(', ') : 'no channel yet';
  return `${word} · unacknowledged for ${formatDuration(note.afterMs)}, escalated (told before: ${before})`;
}

/** The context of an alert as shown: its facts (times as times), its notes, its log lines with their UTC times. */
function describeContext(c: AlertContext): ContextDescription | null {
  const facts = c.facts.map((f) => shownFact(f, f.value));
  const log = c.log && c.log.lines.length > 0 ? describeLog(c.log) : null;
  if (facts.length === 0 && c.notes.length === 0 && log === null) return null;
  return { facts, notes: [...c.notes], log };
}

function describeLog(log: NonNullable<AlertContext['log']>): LogDescription {
  const shown = log.lines.length;
  const errors = log.lines.filter((l) => l.error).length;
  const count = shown < log.matched ? `${shown} of ${log.matched}` : `${shown}`;
  const order = errors > 0 && errors < shown ? ', errors first' : '';
  return {
    title: `Log (${log.source}): ${count} line${log.matched === 1 ? '' : 's'} around the failure${order}`,
    lines: log.lines.map((l) => {
      const at = parseTime(l.time);
      return { stamp: at === null ? null : new Date(at).toISOString().slice(11, 19), text: l.line };
    }),
  };
}

/** Labels of the platform's pages, by record type. */
const PAGE_LABELS = { app: 'App page', run: 'Run page', backup: 'Backup page' } as const;

/** The platform's page of the record an event is about, when `notify.links` has a template for its kind. */
function pageOf(e: AlertEvent, links: MessageLinks): Link | null {
  const type = pageTypeOf(e.subject);
  const template = type && links.pages[type];
  if (!type || !template || e.subject?.id === undefined) return null;
  return { label: PAGE_LABELS[type], url: fillPage(template, e.subject.id) };
}

/**
 * Whether the summary already says a fact's value, as a whole phrase ("for 30h (max 26h)" says
 * Age 30h and Max age 26h; "is critical" says Health critical; "(2026-11-03 11:59 UTC)" says
 * Expires, a time shown the way summaries write times): shown again under it, it reads twice. Values under three characters ("no", "1") are always shown: as words they are too common
 * to tell.
 */
function saysAlready(summary: string, value: string): boolean {
  if (value.length < 3) return false;
  const at = summary.indexOf(value);
  for (let i = at; i !== -1; i = summary.indexOf(value, i + 1)) {
    const before = summary[i - 1];
    const after = summary[i + value.length];
    if (!isWordChar(before) && !isWordChar(after)) return true;
  }
  return false;
}

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[\p{L}\p{N}_]/u.test(c);
}

/**
 * The facts and one-line form an event shows: as its check chose them when it found the problem.
 * An event of an alert stored before alerts kept them (state version 6) has none: its check's
 * presentation makes them from its details, as they were shown then; a check no longer known shows
 * none.
 */
function shownOf(e: AlertEvent): { facts: readonly ShownFact[]; brief: string | null } {
  if (e.facts) return { facts: e.facts, brief: e.brief ?? null };
  const presentation = presentationOf(e.check);
  return { facts: presentation?.facts(e) ?? [], brief: presentation?.brief?.(e.details) ?? null };
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;

/**
 * A fact as shown, its value `value`: a time fact's in UTC, with the time kept for renderers that
 * format their own (as given when unreadable); any other as it is.
 */
function shownFact(f: ShownFact, value: string): Fact {
  const at = f.kind === 'time' && ISO_TIME.test(value) ? Date.parse(value) : NaN;
  return Number.isFinite(at) ? { label: f.label, value: formatUtc(at), at } : { label: f.label, value };
}

/** Labels every event carries with the same value, except those already in the scope. */
function sharedLabels(events: readonly AlertEvent[], scope: readonly string[]): Fact[] {
  const out: Fact[] = [];
  if (events.length < 2) return out;
  for (const [key, label] of WHERE_LABELS) {
    const value = events[0]?.labels[key];
    if (!value || scope.includes(value)) continue;
    if (events.every((e) => e.labels[key] === value)) out.push({ label, value });
  }
  return out;
}

/**
 * The command that mutes what a message is about: one event → its check and app (or server,
 * source, job; `silenceMatchersFor`); several → the message's group labels. Built as words, each
 * matcher written so that `silence` reads back exactly `label=value` (formatMatcher), then made one
 * shell line; null when that line cannot be shown safely. The reason `…` is a placeholder to
 * replace, and a harmless word as it stands.
 */
export function silenceCommand(n: AlertsNotification, configFile: string | undefined): string | null {
  const firing = n.events.filter((e) => e.kind !== 'resolved');
  if (firing.length === 0) return null;
  const one = firing.length === 1 && n.omitted === 0 ? firing[0] : undefined;
  let matchers: [string, string][];
  if (one) {
    const own = silenceMatchersFor(one);
    if (own === null) return null;
    matchers = own.map((m) => [m.name, m.value]);
  } else {
    matchers = Object.entries(n.group).filter(([, v]) => v !== '');
    if (matchers.length === 0) return null;
  }
  const args = [
    'silence',
    ...matchers.flatMap(([name, value]) => ['--match', formatMatcher({ name, op: '=', value })]),
    '--for',
    '2h',
    '--reason',
    '…',
  ];
  return commandLine(configured(args, configFile)).line;
}

/**
 * An event's facts as one list, for a renderer that shows them all alike (a Teams FactSet, a
 * Discord embed, an email's rows): where, its check's facts, since when (UTC, and how long ago),
 * its context's facts, why it is over, its notes (a resolved event has no context, a firing one no
 * reason it is over, so the last two never meet).
 */
export function eventFactList(e: EventDescription): Fact[] {
  const facts: Fact[] = [...e.where, ...e.facts];
  if (e.since) {
    facts.push({ label: 'Since', value: `${e.since.utc}${e.since.ago ? ` (${e.since.ago} ago)` : ''}` });
  }
  // Loops, not push(...spread): an item of the service's with 126,000 fields made a RangeError.
  for (const f of e.context?.facts ?? []) facts.push(f);
  if (e.resolution) facts.push({ label: 'Why', value: e.resolution });
  for (const note of e.context?.notes ?? []) facts.push({ label: 'Note', value: note });
  return facts;
}
