/**
 * certificates: a URL whose certificate is expired, about to expire, in error, or unknown for too long.
 *
 * Two sources are read and the worse one wins: the expiry date against `warn_days`/`critical_days`
 * (thresholds inclusive: exactly `critical_days` left is critical), and the service's own
 * `ssl_status` (`expired` → critical, `expiring_soon` → warning, `error` → critical in
 * production and warning elsewhere, as a failed URL check is, since a browser
 * refuses the site either way). They can disagree — the status lags a renewal, or the date is
 * missing — and either alone is reason enough.
 *
 * `unknown` says the service could not tell, which is no evidence of a problem at first (a new URL,
 * a certificate being issued) but blinds this check for as long as it lasts: reported as a warning
 * once it has lasted `unknown_after` (default 1d; `off`: never), held by the lifecycle from the
 * first sighting since the API does not say since when. A date that is itself a finding leads.
 * One finding per URL, fingerprinted by the URL record, so a rise from warning to critical is an
 * escalation of the same alert and a renewal resolves it.
 */
import { z } from 'zod';
import type { EnvironmentType, UrlRecord } from '../api/schemas.js';
import type { UrlsSnapshot } from '../collectors/snapshot.js';
import { enabledSchema } from '../config/check-config.js';
import { offOrDurationSchema } from '../config/duration.js';
import { productionCritical } from './environment-severity.js';
import { SEVERITY_RANK, type Severity } from '../lib/alert-vocabulary.js';
import { defineCheck } from './define-check.js';
import { recordFinding } from './record-finding.js';
import { recordResolution } from './record-resolution.js';
import { heldFromFirstSighting, type Detection } from './finding.js';
import { formatDuration } from '../lib/format-duration.js';
import { formatUtc } from '../lib/format-utc.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { parseTime } from '../lib/parse-time.js';
import { urlContext } from './url-context.js';

const DAY_MS = 86_400_000;

/** `checks.certificates`. */
export const certificatesConfig = z
  .strictObject({
    enabled: enabledSchema,
    warn_days: z.number().int().min(1).max(365).default(14),
    critical_days: z.number().int().min(0).max(365).default(3),
    unknown_after: offOrDurationSchema
      .prefault('1d')
      .describe(
        'A certificate whose ssl_status stays unknown this long is alerted as a warning (the check is blind to it meanwhile); "off": never.',
      ),
  })
  .refine((c) => c.critical_days < c.warn_days, {
    path: ['critical_days'],
    message: 'must be less than warn_days',
  })
  .prefault({});

/** The certificates check. */
export const certificatesCheck = defineCheck({
  name: 'certificates',
  job: 'urls',
  config: certificatesConfig,
  detect: certificates,
  // Whether a record's certificate is a finding: the same judgement the detector makes.
  relevant: (record, options, now) => judge(record, options, now, record.environment_type).lead !== null,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'url', snapshot.urls, (record) => {
      const expires = parseTime(record.ssl_expires_at);
      // An unknown status that is over was never a certificate to renew: say what it is now.
      if (alert.details.reason === 'status_unknown')
        return `certificate status is ${record.ssl_status} now${expires === null ? '' : `, valid until ${formatUtc(expires, 'reading')}`}`;
      return expires === null
        ? `certificate ${record.ssl_status}`
        : `certificate renewed: valid until ${formatUtc(expires, 'reading')}`;
    }),
  presentation: {
    noun: ['certificate problem', 'certificate problems'],
    facts: factsFrom([['url', 'URL'], ['expires_at', 'Expires', 'time'], 'left', ['ssl_status', 'SSL status']]),
    brief: (d) => {
      if (d.left === 'expired') return 'certificate expired';
      if (d.reason === 'status_unknown') return 'certificate status unknown';
      return d.left ? `certificate expires in ${d.left}` : null;
    },
    nextStep: ({ details }) =>
      details.reason === 'status_unknown'
        ? "Open the URL on the platform: find why its certificate cannot be read (the domain's DNS, a certificate not issued yet)."
        : "Renew the certificate, or fix what blocks its automatic renewal (the domain's DNS, the ACME challenge).",
  },
});

/** `checks.certificates` as parsed: the detector's options. */
export type CertificatesConfig = z.output<typeof certificatesConfig>;

/** Why a certificate is a finding: the rule that fired, named. */
export type CertificateReason =
  | 'expired'
  | 'within_critical_days'
  | 'within_warn_days'
  | 'status_expired'
  | 'status_expiring_soon'
  | 'status_error'
  | 'status_unknown';

interface Verdict {
  severity: Severity;
  reason: CertificateReason;
}

/** The verdict of the expiry date, or null when it is unknown or far enough away. */
function byDate(expires: number | null, options: CertificatesConfig, now: number): Verdict | null {
  if (expires === null) return null;
  const left = expires - now;
  if (left <= 0) return { severity: 'critical', reason: 'expired' };
  if (left <= options.critical_days * DAY_MS) return { severity: 'critical', reason: 'within_critical_days' };
  if (left <= options.warn_days * DAY_MS) return { severity: 'warning', reason: 'within_warn_days' };
  return null;
}

/**
 * The verdict of the service's `ssl_status`, or null for `valid` (and `unknown` when `unknown_after`
 * is off). `error` takes its environment's severity: the record's, else its app's.
 */
function byStatus(record: UrlRecord, options: CertificatesConfig, environment: EnvironmentType | null): Verdict | null {
  switch (record.ssl_status) {
    case 'expired':
      return { severity: 'critical', reason: 'status_expired' };
    case 'expiring_soon':
      return { severity: 'warning', reason: 'status_expiring_soon' };
    case 'error':
      return { severity: productionCritical(environment), reason: 'status_error' };
    case 'unknown':
      return options.unknown_after === null ? null : { severity: 'warning', reason: 'status_unknown' };
    default:
      return null;
  }
}

/** The worse of two verdicts; on a tie the date's, which says more (how long is left). */
function worse(date: Verdict | null, status: Verdict | null): Verdict | null {
  if (!date) return status;
  if (!status) return date;
  return SEVERITY_RANK[date.severity] >= SEVERITY_RANK[status.severity] ? date : status;
}

/**
 * Both verdicts of a record's certificate and the one that leads (null: not a finding).
 * `environment`: the record's environment type, else its app's (unknown to the relevance test,
 * which keeps a record in error whatever its severity).
 */
function judge(record: UrlRecord, options: CertificatesConfig, now: number, environment: EnvironmentType | null) {
  const expires = parseTime(record.ssl_expires_at);
  const date = byDate(expires, options, now);
  const status = byStatus(record, options, environment);
  return { expires, date, status, lead: worse(date, status) };
}

/** Finds URLs whose certificate needs attention; one finding per URL. */
export function certificates(
  snapshot: UrlsSnapshot,
  options: CertificatesConfig,
  now: number,
): Detection<'certificates'>[] {
  const findings: Detection<'certificates'>[] = [];
  for (const record of snapshot.urls) {
    const ctx = urlContext(record, snapshot.apps);
    const { expires, date, status, lead } = judge(record, options, now, ctx.environmentType);
    if (!lead) continue;

    const expiresIso = expires === null ? null : new Date(expires).toISOString();
    // Only date verdicts read `left`, and they exist only when the date is known.
    const left = expires === null ? 0 : expires - now;
    const subject = `Certificate of ${record.url} for ${ctx.appName}`;
    const expiresText = expires === null ? null : formatUtc(expires);
    const expiresIn = () => `expires in ${formatDuration(left, 'days')} (${expiresText})`;
    const said: Record<CertificateReason, () => string> = {
      expired: () => `expired ${formatDuration(-left, 'days')} ago (${expiresText})`,
      within_critical_days: expiresIn,
      within_warn_days: expiresIn,
      status_expired: () => 'is reported expired by the service',
      status_expiring_soon: () => 'is reported expiring soon by the service',
      status_error: () => 'is in error',
      status_unknown: () => `has been unknown to the service for more than ${formatDuration(options.unknown_after!)}`,
    };
    let summary = `${subject} ${said[lead.reason]()}`;
    if (lead === status && expiresText) summary += ` (expiry date ${expiresText})`;

    const details: Record<string, string> = {
      url: record.url,
      app: ctx.appName,
      ssl_status: record.ssl_status,
      expires_at: expiresIso ?? record.ssl_expires_at ?? 'unknown',
    };
    if (expires !== null) details.left = expires > now ? formatDuration(expires - now, 'days') : 'expired';
    details.reason = [date?.reason, status?.reason].filter((r) => r !== undefined).join(', ');

    findings.push({
      ...recordFinding('certificates', { type: 'url', id: record.id }, ctx.labels, ctx.url),
      severity: lead.severity,
      summary: oneLine(summary),
      details,
      since: expires !== null && expires <= now ? expiresIso : null,
      // The API says the status, not since when: the lifecycle's first sighting stands in.
      ...(lead.reason === 'status_unknown' &&
        heldFromFirstSighting(options.unknown_after!, 'checks.certificates.unknown_after')),
    });
  }
  return findings;
}
