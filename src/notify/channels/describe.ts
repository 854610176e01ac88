/**
 * What a message says, worked out once for every channel kind: the headline (severity, count,
 * what, where) and the facts of each event, as plain unescaped text. Each renderer escapes for its
 * own medium (mrkdwn, HTML, a mail header), so escaping cannot be forgotten in one of them.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import type { CheckName, Severity } from '../../detectors/finding.js';
import { formatDuration } from '../../lib/format-duration.js';
import type { AlertsNotification } from './channel.js';

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

const SEVERITY_ORDER: Severity[] = ['info', 'warning', 'critical'];

/** Singular and plural noun of each check, for "3 failed runs". */
const CHECK_NOUNS: Record<CheckName, [string, string]> = {
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

/** The headline of an alerts message. */
export interface Headline {
  tone: Tone;
  /** Events in the group, shown and omitted. */
  count: number;
  /** Shown events that are resolved. */
  resolved: number;
  /** "failed runs", "alerts"… */
  what: string;
  /** Where: the group's values other than the check ("production"); API text, unescaped. */
  scope: string[];
}

/** Works out the headline of an alerts notification: worst firing severity, or resolved. */
export function describeHeadline(n: AlertsNotification): Headline {
  const firing = n.events.filter((e) => e.kind !== 'resolved');
  const resolved = n.events.length - firing.length;
  let tone: Tone = 'resolved';
  if (firing.length > 0 || n.events.length === 0) {
    tone = SEVERITY_ORDER.reduce<Severity>(
      (worst, s) => (firing.some((e) => e.severity === s) ? s : worst),
      'info',
    );
  }
  const count = n.events.length + Math.max(0, n.omitted);
  const checks = new Set(n.events.map((e) => e.check));
  const check = (n.group.check ?? (checks.size === 1 ? [...checks][0] : undefined)) as CheckName | undefined;
  const nouns = (check && CHECK_NOUNS[check]) || ['alert', 'alerts'];
  const what = count === 1 ? nouns[0] : nouns[1];
  let scope = Object.entries(n.group)
    .filter(([k, v]) => k !== 'check' && v !== '')
    .map(([, v]) => v);
  if (scope.length === 0) {
    const envs = new Set(n.events.map((e) => e.labels.environment_type));
    const env = envs.size === 1 ? [...envs][0] : undefined;
    if (env) scope = [env];
  }
  return { tone, count, resolved, what, scope };
}

/** One fact of an event, e.g. { label: 'Environment', value: 'production' }. */
export interface Fact {
  label: string;
  value: string;
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
  facts: Fact[];
  /** Since when (the source's `since`, else `startsAt`): absolute (UTC) and how long ago, or the raw text if unparseable. */
  since: { iso: string; epochSeconds: number | null; ago: string | null };
}

/** Labels shown as facts, in this order, with their display names. */
const LABEL_FACTS: [string, string][] = [
  ['environment_type', 'Environment'],
  ['project', 'Project'],
  ['namespace', 'Namespace'],
  ['server', 'Server'],
];

/** Describes one event for a reader, with times relative to `now` (ms since the epoch). */
export function describeEvent(e: AlertEvent, now: number): EventDescription {
  const word = TONES[e.severity].word;
  let tone: Tone = e.severity;
  let status: string;
  // Since when the problem exists: the source's own time where it says, else when the alert fired.
  const startedText = e.since ?? e.startsAt;
  const started = Date.parse(startedText);
  switch (e.kind) {
    case 'resolved': {
      tone = 'resolved';
      const ended = e.endsAt ? Date.parse(e.endsAt) : NaN;
      status = Number.isFinite(ended) && Number.isFinite(started) ? `RESOLVED after ${formatDuration(ended - started)}` : 'RESOLVED';
      break;
    }
    case 'escalated':
      status = `ESCALATED to ${word}`;
      break;
    case 'repeat':
      status = `${word} · still firing`;
      break;
    default:
      status = word;
  }
  const facts: Fact[] = [];
  for (const [key, label] of LABEL_FACTS) {
    const v = e.labels[key];
    if (v) facts.push({ label, value: v });
  }
  for (const [key, value] of Object.entries(e.details)) {
    if (value !== '') facts.push({ label: labelOf(key), value });
  }
  return {
    tone,
    status,
    summary: e.summary,
    app: e.labels.app ?? null,
    url: e.url,
    facts,
    since: Number.isFinite(started)
      ? {
          iso: formatUtc(started),
          epochSeconds: Math.floor(started / 1000),
          ago: `${formatDuration(now - started)} ago`,
        }
      : { iso: startedText, epochSeconds: null, ago: null },
  };
}

/** `retrying_grace` → `Retrying grace`. */
function labelOf(key: string): string {
  const words = key.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** "2026-11-01 12:00 UTC": a time everyone on the team reads the same way. */
export function formatUtc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
