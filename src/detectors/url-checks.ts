/**
 * url_checks: a URL that the service's outside check found not answering as its app
 * (`public_check` `failed`). `null` means "not checked" and is not a failure: a URL the service
 * has not checked yet is no evidence of a problem.
 */
import type { UrlRecord } from '../api/schemas.js';
import type { UrlsSnapshot } from '../collectors/snapshot.js';
import { checkConfig } from '../config/check-config.js';
import { buildLabels } from './build-labels.js';
import { defineCheck } from './define-check.js';
import { recordResolution } from './record-resolution.js';
import { environmentSeverity, PRODUCTION_CRITICAL, type EnvironmentSeverity } from './environment-severity.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { formatUtc } from '../lib/format-utc.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { urlContext } from './url-context.js';

/** Options of the url_checks check (`checks.url_checks`). */
export interface UrlChecksOptions {
  /** Severity per environment type; default critical in production, warning elsewhere. */
  severity?: Partial<EnvironmentSeverity>;
}

/** The url_checks check (`checks.url_checks`: only `enabled`). */
export const urlChecksCheck = defineCheck({
  name: 'url_checks',
  job: 'urls',
  config: checkConfig({}),
  options: (own): UrlChecksOptions | undefined => (own.enabled ? {} : undefined),
  detect: urlChecks,
  relevant: urlCheckFailed,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'url', snapshot.urls, 'the URL is gone from the service', (record) => {
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
    ]),
    brief: (d) => (d.url ? `${d.url} failing${d.code ? `: ${d.code}` : ''}` : null),
    nextStep: () => 'Open the URL from outside: check that the app answers and that its domain and proxy point at it.',
  },
});

/** Whether the service's last outside check of the URL failed: a finding, and a record the URLs collector keeps. */
export function urlCheckFailed(record: UrlRecord): boolean {
  return record.public_check === 'failed';
}

/** Finds URLs whose last outside check failed; one finding per URL. */
export function urlChecks(snapshot: UrlsSnapshot, options: UrlChecksOptions): Detection<'url_checks'>[] {
  const findings: Detection<'url_checks'>[] = [];
  for (const record of snapshot.urls) {
    if (!urlCheckFailed(record)) continue;
    const ctx = urlContext(record, snapshot.apps);
    const code = record.public_check_code;
    const details: Record<string, string> = { url: record.url, app: ctx.appName, public_check: 'failed' };
    if (code) details.code = code;
    const checked = toIso(record.public_checked_at);
    if (checked) details.checked_at = checked;
    findings.push({
      fingerprint: fingerprint('url_checks', 'url', record.id),
      check: 'url_checks',
      severity: environmentSeverity(ctx.environmentType, { ...PRODUCTION_CRITICAL, ...options.severity }),
      summary: oneLine(`${record.url} does not answer as ${ctx.appName}${code ? `: ${code}` : ''}`),
      details,
      labels: buildLabels('url_checks', ctx.labels),
      url: ctx.url,
      // The source says when it last checked, not when the URL started failing.
      since: null,
      subject: { type: 'url', id: record.id },
    });
  }
  return findings;
}
