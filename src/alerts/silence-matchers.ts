/**
 * Which matchers silence one alert and as little else as possible: its check, and the first of its
 * installer, app, server, source or job labels (a marketplace service names its app and server
 * too, and silencing those would mute more than the service). A service's name is its own only
 * within its namespace (two teams each run a `redis-7`), so its namespace comes with it. The "To
 * silence" line of a message and the console's "Silence…" button offer the same ones.
 */
import type { Labels, Subject } from '../lib/alert-vocabulary.js';
import type { LabelMatcher } from './matchers.js';

/** Labels that pick out one alert for a silence, best first (with `check` always). */
const SILENCE_KEYS: readonly string[] = ['installer', 'app', 'server', 'source', 'job'];

/** Labels whose values are unique only within a namespace: their silence names the namespace too. */
const NAMESPACED_KEYS: ReadonlySet<string> = new Set(['installer']);

/** Subjects that belong to one app: their silence must name the app. */
const APP_SUBJECTS: ReadonlySet<string> = new Set(['run', 'app', 'url', 'backup']);

/**
 * The matchers that silence this alert, or null when no safe set exists: an alert about an app's
 * run, URL or backup without an app label (a name the service left empty), where any other label
 * would mute more than this alert.
 */
export function silenceMatchersFor(alert: {
  check: string;
  labels: Labels;
  subject?: Subject | null | undefined;
}): LabelMatcher[] | null {
  if (alert.subject && APP_SUBJECTS.has(alert.subject.type) && !alert.labels.app) return null;
  const key = SILENCE_KEYS.find((k) => alert.labels[k]);
  const namespace = key && NAMESPACED_KEYS.has(key) ? alert.labels.namespace : undefined;
  return [
    { name: 'check', op: '=', value: alert.check },
    ...(key ? [{ name: key, op: '=' as const, value: alert.labels[key]! }] : []),
    ...(namespace ? [{ name: 'namespace', op: '=' as const, value: namespace }] : []),
  ];
}
