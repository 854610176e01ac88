/**
 * What a message says, worked out once for every channel kind: the headline (severity, counts,
 * what, where), the facts shared by every event, and per event only the facts that matter for its
 * check, as plain unescaped text with times kept as times. Each renderer escapes for its own
 * medium (mrkdwn, HTML, a mail header) and formats times its own way (a Slack date token, UTC),
 * so escaping cannot be forgotten in one of them and no raw ISO string reaches a reader.
 *
 * Written for an on-call engineer reading on a phone: a firing event shows where (the labels not
 * shared by the whole message), its check's key facts and since when; a resolved one says
 * "RESOLVED after 42m" and nothing else; more than {@link COMPACT_OVER} events become one line each.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import { formatMatcher } from '../../alerts/matchers.js';
import type { CheckName, Severity } from '../../detectors/finding.js';
import { formatDuration } from '../../lib/format-duration.js';
import { formatUtc } from '../../lib/format-utc.js';
import type { AlertsNotification } from './channel.js';
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

const SEVERITY_ORDER: readonly Severity[] = ['info', 'warning', 'critical'];

/** Singular and plural noun of each check, for "3 failed runs". */
const CHECK_NOUNS: Readonly<Record<CheckName, readonly [string, string]>> = {
  failed_runs: ['failed run', 'failed runs'],
  stuck_runs: ['stuck run', 'stuck runs'],
  certificates: ['certificate problem', 'certificate problems'],
  url_checks: ['URL check failing', 'URL checks failing'],
  backups: ['backup problem', 'backup problems'],
  attention: ['item needing attention', 'items needing attention'],
  maintenance: ['app in maintenance', 'apps in maintenance'],
  servers: ['server in a bad state', 'servers in a bad state'],
  watchdog: ['watchdog problem', 'watchdog problems'],
};

/** One fact, e.g. { label: 'Step', value: 'install' }; `at` when the value is a time (ms). */
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
}

/** Since when a problem exists. */
export interface Since {
  /** ms since the epoch; null when the source's text could not be read (then `text` is shown). */
  at: number | null;
  text: string;
  /** "2h": how long ago; null under a minute (a fresh alert says nothing with "0s ago"). */
  ago: string | null;
}

/** What is shown of one event. All strings are API text, unescaped. */
export interface EventDescription {
  tone: Tone;
  /** "CRITICAL", "CRITICAL · still firing", "ESCALATED to CRITICAL", "RESOLVED after 42m". */
  status: string;
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
   * The `deploy-watchdog silence …` line that mutes what this message is about, quoted for a POSIX
   * shell and not yet escaped for any medium; null when all resolved or when it cannot be shown
   * safely (see `commandLine`).
   */
  silenceCommand: string | null;
}

/** What describing needs besides the notification and the time. */
export interface DescribeOptions {
  /**
   * The `--config` the commands a message prints must give: the daemon's config file, absolute.
   * Absent: they need none (the default resolution finds the daemon's file).
   */
  commandConfigFile?: string | undefined;
}

/** Labels that say where, in this order, with their display names. */
const WHERE_LABELS: readonly (readonly [string, string])[] = [
  ['environment_type', 'Environment'],
  ['project', 'Project'],
  ['namespace', 'Namespace'],
  ['server', 'Server'],
];

/** A detail shown for a check: its key, display name, and whether the value is a time. */
type FactSpec = readonly [key: string, label: string, kind?: 'time'];

/**
 * The details that matter per check, in order; the rest repeat the summary or the labels. The
 * attention check's details are whatever the service listed, so they are filtered instead
 * ({@link genericFacts}).
 */
const CHECK_FACTS: Readonly<Record<Exclude<CheckName, 'attention'>, readonly FactSpec[]>> = {
  failed_runs: [
    ['run', 'Run'],
    ['step', 'Step'],
    ['reason', 'Reason'],
    ['watcher', 'Watcher'],
    ['retrying', 'Retrying'],
  ],
  stuck_runs: [
    ['run', 'Run'],
    ['running_for', 'Running for'],
    ['step', 'Step'],
    ['step_running_for', 'Step running for'],
    ['progress', 'Progress'],
    ['last_update', 'Last update', 'time'],
  ],
  certificates: [
    ['url', 'URL'],
    ['expires_at', 'Expires', 'time'],
    ['left', 'Left'],
    ['ssl_status', 'SSL status'],
  ],
  url_checks: [
    ['url', 'URL'],
    ['code', 'Answer'],
    ['checked_at', 'Checked', 'time'],
  ],
  backups: [
    ['age', 'Age'],
    ['max_age', 'Max age'],
    ['newest_backup', 'Newest backup'],
    ['backup', 'Backup'],
    ['backup_health', 'Health'],
    ['last_backup_at', 'Last backup', 'time'],
    ['taken_at', 'Taken', 'time'],
    ['verified', 'Verified'],
    ['storage', 'Storage'],
    ['state', 'Copy state'],
    ['error', 'Error'],
    ['uploaded_at', 'Uploaded', 'time'],
  ],
  maintenance: [
    ['state', 'State'],
    ['max_duration', 'Allowed'],
  ],
  servers: [
    ['app_count', 'Apps'],
    ['provider', 'Provider'],
    ['region', 'Region'],
    ['public_ip', 'IP'],
  ],
  watchdog: [
    ['error', 'Error'],
    ['failed_cycles', 'Failed cycles'],
    ['last_success', 'Last success', 'time'],
    ['permission', 'Permission'],
    ['refused', 'Refused'],
    ['until', 'Until'],
  ],
};

/** Attention details never shown: ids, what the labels and the link already say, the section's own words. */
const GENERIC_DROP =
  /^(id|.*_id|app|name|namespace|project|environment|environment_type|server|url|since|section|rule|kind|section_total)$/;

/** Describes an alerts notification for a reader, with times relative to `now` (ms since the epoch). */
export function describeAlerts(n: AlertsNotification, now: number, options: DescribeOptions = {}): AlertsDescription {
  const headline = describeHeadline(n);
  const shared = sharedLabels(n.events, headline.scope);
  // Said once for the message: the shared labels, and those the headline's scope already names.
  const sharedKeys = new Set(shared.map((f) => f.label));
  for (const [key, label] of WHERE_LABELS) if (n.group[key]) sharedKeys.add(label);
  const events = n.events.map((e) => describeEvent(e, now, sharedKeys));
  return {
    headline,
    shared,
    compact: n.events.length > COMPACT_OVER,
    events,
    omitted: Math.max(0, n.omitted),
    silenceCommand: silenceCommand(n, options.commandConfigFile),
  };
}

/** Works out the headline: worst firing severity (or resolved), the counts, the scope. */
export function describeHeadline(n: AlertsNotification): Headline {
  const omittedResolved = Math.min(Math.max(0, n.omittedResolved ?? 0), Math.max(0, n.omitted));
  const firingEvents = n.events.filter((e) => e.kind !== 'resolved');
  const firing = firingEvents.length + Math.max(0, n.omitted) - omittedResolved;
  const resolved = n.events.length - firingEvents.length + omittedResolved;
  let tone: Tone = 'resolved';
  if (firing > 0 || n.events.length === 0) {
    tone = SEVERITY_ORDER.reduce<Severity>(
      (worst, s) => (firingEvents.some((e) => e.severity === s) ? s : worst),
      'info',
    );
    // Omitted events are sorted after the shown ones, so the shown ones hold the worst severity.
  }
  const checks = new Set(n.events.map((e) => e.check));
  const check = (n.group.check ?? (checks.size === 1 ? [...checks][0] : undefined)) as CheckName | undefined;
  const nouns = (check && CHECK_NOUNS[check]) || (['alert', 'alerts'] as const);
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
  return { tone, counts, what, scope };
}

/** Describes one event. `shared`: labels (by display name) the message states once for all events. */
export function describeEvent(e: AlertEvent, now: number, shared: ReadonlySet<string> = new Set()): EventDescription {
  const word = TONES[e.severity].word;
  // Since when the problem exists: the source's own time where it says, else when the alert fired.
  const startedText = e.since ?? e.startsAt;
  const started = Date.parse(startedText);
  const base = { summary: e.summary, app: e.labels.app ?? null, url: e.url };
  if (e.kind === 'resolved') {
    const ended = e.endsAt ? Date.parse(e.endsAt) : NaN;
    const lasted = Number.isFinite(ended) && Number.isFinite(started) ? formatDuration(ended - started) : null;
    const status = lasted ? `RESOLVED after ${lasted}` : 'RESOLVED';
    return {
      ...base,
      tone: 'resolved',
      status,
      where: [],
      facts: [],
      since: null,
      brief: lasted ? `resolved after ${lasted}` : 'resolved',
      briefIsSummary: false,
    };
  }
  const status =
    e.kind === 'escalated' ? `ESCALATED to ${word}` : e.kind === 'repeat' ? `${word} · still firing` : word;
  const where: Fact[] = [];
  for (const [key, label] of WHERE_LABELS) {
    const v = e.labels[key];
    if (v && !shared.has(label)) where.push({ label, value: v });
  }
  const facts = e.check === 'attention' ? genericFacts(e) : specFacts(e.details, CHECK_FACTS[e.check]);
  const ago = Number.isFinite(started) && now - started >= 60_000 ? formatDuration(now - started) : null;
  const since: Since = { at: Number.isFinite(started) ? started : null, text: startedText, ago };
  const brief = briefOf(e);
  return {
    ...base,
    tone: e.severity,
    status,
    where,
    facts,
    since,
    brief: brief ?? e.summary,
    briefIsSummary: brief === null,
  };
}

function specFacts(details: Readonly<Record<string, string>>, spec: readonly FactSpec[]): Fact[] {
  const out: Fact[] = [];
  for (const [key, label, kind] of spec) {
    const value = details[key];
    if (value === undefined || value === '') continue;
    out.push(kind === 'time' ? timeFact(label, value) : { label, value });
  }
  return out;
}

/** An attention item's details without ids, labels, the link, and anything repeating the labels or summary. */
function genericFacts(e: AlertEvent): Fact[] {
  const said = new Set([e.summary, ...Object.values(e.labels).filter((v): v is string => Boolean(v))]);
  const out: Fact[] = [];
  for (const [key, value] of Object.entries(e.details)) {
    if (value === '' || GENERIC_DROP.test(key) || said.has(value)) continue;
    out.push(ISO_TIME.test(value) ? timeFact(labelOf(key), value) : { label: labelOf(key), value });
  }
  return out;
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;

function timeFact(label: string, value: string): Fact {
  const at = ISO_TIME.test(value) ? Date.parse(value) : NaN;
  return Number.isFinite(at) ? { label, value: formatUtc(at), at } : { label, value };
}

/** The one-line form of an event for compact messages; null: the summary says it best. */
function briefOf(e: AlertEvent): string | null {
  const d = e.details;
  switch (e.check) {
    case 'failed_runs':
      if (d.step && d.reason) return `step ${d.step}: ${d.reason}`;
      return d.reason ?? (d.step ? `step ${d.step}` : null);
    case 'stuck_runs':
      return d.running_for ? `running ${d.running_for}${d.step ? ` · step ${d.step}` : ''}` : null;
    case 'certificates':
      if (d.left === 'expired') return 'certificate expired';
      return d.left ? `certificate expires in ${d.left}` : null;
    case 'url_checks':
      return d.url ? `${d.url} failing${d.code ? `: ${d.code}` : ''}` : null;
    default:
      return null;
  }
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

/** Labels that pick out one alert for a silence, best first (with `check` always). */
const SILENCE_KEYS: readonly string[] = ['app', 'server', 'source', 'job'];

/**
 * The command that mutes what a message is about: one event → its check and app (or server,
 * source, job); several → the message's group labels. Built as words, each matcher written so
 * that `silence` reads back exactly `label=value` (formatMatcher), then made one shell line; null
 * when that line cannot be shown safely. The reason `…` is a placeholder to replace, and a
 * harmless word as it stands.
 */
function silenceCommand(n: AlertsNotification, configFile: string | undefined): string | null {
  const firing = n.events.filter((e) => e.kind !== 'resolved');
  if (firing.length === 0) return null;
  const one = firing.length === 1 && n.omitted === 0 ? firing[0] : undefined;
  let matchers: [string, string][];
  if (one) {
    const key = SILENCE_KEYS.find((k) => one.labels[k]);
    matchers = [['check', one.check], ...(key ? [[key, one.labels[key]!] as [string, string]] : [])];
  } else {
    matchers = Object.entries(n.group).filter(([, v]) => v !== '');
    if (matchers.length === 0) return null;
  }
  const argv = [
    'deploy-watchdog',
    'silence',
    ...(configFile === undefined ? [] : ['--config', configFile]),
    ...matchers.flatMap(([name, value]) => ['--match', formatMatcher({ name, op: '=', value })]),
    '--for',
    '2h',
    '--reason',
    '…',
  ];
  return commandLine(argv).line;
}

/** `retrying_grace` → `Retrying grace`. */
function labelOf(key: string): string {
  const words = key.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
