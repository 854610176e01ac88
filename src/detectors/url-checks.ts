/**
 * url_checks: a URL that the service's outside check found not answering as its app
 * (`public_check` `failed`), and, as its own problem (fingerprint `…/unchecked`), a URL the outside
 * check has not judged for `max_check_age` (default 12h; `off`: never):
 *
 * - `public_check` null ("not checked", `public_check_code` saying why when it says anything): no
 *   evidence of a failure, and at first no problem (a URL just added). But while it lasts nobody
 *   knows whether the URL answers, so it is reported as a warning once it has lasted
 *   `max_check_age`: from `public_checked_at` (the last check that ran) when the service gives it,
 *   else held by the lifecycle from the first sighting.
 * - `public_checked_at` older than `max_check_age`: the outside check stopped running; what it said
 *   then (passed) is stale. Reported at once, since the time says how long.
 *
 * A failed check is the failure alert only (its time is shown there): one URL, one page.
 */
import type { z } from 'zod';
import type { UrlRecord } from '../api/schemas.js';
import type { UrlsSnapshot } from '../collectors/snapshot.js';
import { checkConfig } from '../config/check-config.js';
import { offOrDurationSchema } from '../config/duration.js';
import { formatDuration } from '../lib/format-duration.js';
import { defineCheck } from './define-check.js';
import { recordFinding } from './record-finding.js';
import { recordResolution } from './record-resolution.js';
import { productionCritical } from './environment-severity.js';
import { heldFromFirstSighting, type Detection } from './finding.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { formatUtc } from '../lib/format-utc.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { urlContext, type UrlContext } from './url-context.js';
import { knownValues } from './build-labels.js';

/** `checks.url_checks`. */
export const urlChecksConfig = checkConfig({
  max_check_age: offOrDurationSchema
    .prefault('12h')
    .describe(
      'A URL that the outside check has not judged for this long (public_check null, or public_checked_at older) is alerted as a warning; "off": never.',
    ),
});

/** The url_checks check (`checks.url_checks`). Severity: critical in production, warning elsewhere. */
export const urlChecksCheck = defineCheck({
  name: 'url_checks',
  job: 'urls',
  config: urlChecksConfig,
  detect: urlChecks,
  relevant: (record, options, now) => record.public_check === 'failed' || uncheckedFor(record, options, now) !== null,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'url', snapshot.urls, (record) => {
      const at = parseTime(record.public_checked_at);
      const when = at === null ? '' : ` at ${formatUtc(at, 'reading')}`;
      return record.public_check === null
        ? 'the outside check no longer reports it'
        : `outside check ${record.public_check}${when}`;
    }),

  presentation: {
    noun: ['URL check failing', 'URL checks failing'],
    facts: factsFrom([
      ['url', 'URL'],
      ['code', 'Answer'],
      ['checked_at', 'Checked', 'time'],
      ['max_check_age', 'Allowed without a check'],
    ]),
    brief: (d) => {
      if (!d.url) return null;
      if (d.public_check !== 'failed') return `${d.url} not checked${d.code ? `: ${d.code}` : ''}`;
      return `${d.url} failing${d.code ? `: ${d.code}` : ''}`;
    },
    nextStep: ({ labels }) =>
      labels.problem === 'unchecked'
        ? "Find why the platform's outside check does not run for this URL (its code says why, when it says), and open the URL from outside meanwhile."
        : 'Open the URL from outside: check that the app answers and that its domain and proxy point at it.',
  },
});

/** `checks.url_checks` as parsed: the detector's options. */
export type UrlChecksConfig = z.output<typeof urlChecksConfig>;

/**
 * How the URL goes without an outside check's verdict, or null when it does not (or the check
 * failed, which is its own alert): `age` known from `public_checked_at`, or `hold` (the lifecycle
 * measures it from the first sighting) when the service never says.
 */
export function uncheckedFor(
  record: UrlRecord,
  options: UrlChecksConfig,
  now: number,
): { age: number } | { hold: number } | null {
  const max = options.max_check_age;
  if (max === null || record.public_check === 'failed') return null;
  const at = parseTime(record.public_checked_at);
  if (at !== null) return now - at > max ? { age: now - at } : null;
  // A verdict without a time cannot be aged: it stands, as it always did.
  return record.public_check === null ? { hold: max } : null;
}

/** Finds URLs whose last outside check failed, and URLs the outside check has not judged for too long. */
export function urlChecks(snapshot: UrlsSnapshot, options: UrlChecksConfig, now: number): Detection<'url_checks'>[] {
  const findings: Detection<'url_checks'>[] = [];
  for (const record of snapshot.urls) {
    const unchecked = uncheckedFor(record, options, now);
    const failed = record.public_check === 'failed';
    // Most URLs are fine: their context (labels, the host parsed from the URL) is never built.
    if (!unchecked && !failed) continue;
    const ctx = urlContext(record, snapshot.apps);
    if (unchecked) findings.push(uncheckedFinding(record, ctx, options.max_check_age!, unchecked));
    if (!failed) continue;
    const code = record.public_check_code;
    findings.push({
      ...recordFinding('url_checks', { type: 'url', id: record.id }, ctx.labels, ctx.url),
      severity: productionCritical(ctx.environmentType),
      summary: oneLine(`${record.url} does not answer as ${ctx.appName}${code ? `: ${code}` : ''}`),
      details: urlDetails(record, ctx, { public_check: 'failed' }),
      // The source says when it last checked, not when the URL started failing.
      since: null,
    });
  }
  return findings;
}

/**
 * The details of a finding about a URL: the URL, its app, `own`, and the outside check's code and
 * time when the service says them.
 */
function urlDetails(record: UrlRecord, ctx: UrlContext, own: Record<string, string>): Record<string, string> {
  const { public_check_code: code, public_checked_at: checked } = record;
  return { url: record.url, app: ctx.appName, ...own, ...knownValues({ code, checked_at: toIso(checked) }) };
}

/** The finding of a URL the outside check has not judged for `max`. */
function uncheckedFinding(
  record: UrlRecord,
  ctx: UrlContext,
  max: number,
  unchecked: { age: number } | { hold: number },
): Detection<'url_checks'> {
  const code = record.public_check_code;
  const details = urlDetails(record, ctx, {
    public_check: record.public_check ?? 'not checked',
    max_check_age: formatDuration(max),
  });
  const checked = details.checked_at;
  const why = code ? ` (${code})` : '';
  const summary =
    'age' in unchecked
      ? `${record.url} of ${ctx.appName} has not been checked from outside for ${formatDuration(unchecked.age)}${record.public_check === null ? `: not checked${why}` : ` (last: ${record.public_check})`}`
      : `${record.url} of ${ctx.appName} has not been checked from outside for more than ${formatDuration(max)}${why}`;
  const labels = { ...ctx.labels, problem: 'unchecked' };
  return {
    ...recordFinding('url_checks', { type: 'url', id: record.id }, labels, ctx.url, 'unchecked'),
    severity: 'warning',
    summary: oneLine(summary),
    details,
    since: 'age' in unchecked && checked ? new Date(Date.parse(checked) + max).toISOString() : null,
    ...('hold' in unchecked && heldFromFirstSighting(unchecked.hold, 'checks.url_checks.max_check_age')),
  };
}
