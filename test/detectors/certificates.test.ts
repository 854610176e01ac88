import { describe, expect, it } from 'vitest';
import type { SslStatus, UrlRecord } from '../../src/api/schemas.js';
import {
  certificates,
  certificatesCheck,
  certificatesConfig,
  type CertificatesConfig,
} from '../../src/detectors/certificates.js';
import { presentationOf } from '../../src/detectors/registry.js';
import { formatDuration } from '../../src/lib/format-duration.js';
import type { Severity } from '../../src/lib/alert-vocabulary.js';
import { formatUtc } from '../../src/lib/format-utc.js';
import {
  appListItem,
  DAY,
  expectWellFormed,
  HOUR,
  MINUTE,
  NOW,
  resolutionOf,
  urlRecord,
  urlsSnapshot,
} from './fixtures.js';

const options = certificatesConfig.parse({});
const expiresIn = (ms: number) => new Date(NOW + ms).toISOString();
const shown = (ms: number) => formatUtc(NOW + ms);
/** The instant `ms` as a service in UTC-03:00 writes it, with a space and no milliseconds. */
const offsetTime = (ms: number) => `${new Date(ms - 3 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')}-03:00`;

describe('certificates', () => {
  it.each<[string, SslStatus, string | null, Severity | null, string]>([
    ['far from expiry', 'valid', expiresIn(60 * DAY), null, ''],
    ['just outside warn_days', 'valid', expiresIn(14 * DAY + 1), null, ''],
    ['exactly warn_days left', 'valid', expiresIn(14 * DAY), 'warning', 'within_warn_days'],
    ['within warn_days', 'valid', expiresIn(10 * DAY), 'warning', 'within_warn_days'],
    ['just outside critical_days', 'valid', expiresIn(3 * DAY + 1), 'warning', 'within_warn_days'],
    ['exactly critical_days left', 'valid', expiresIn(3 * DAY), 'critical', 'within_critical_days'],
    ['expiring this very moment', 'valid', expiresIn(0), 'critical', 'expired'],
    ['expired', 'expired', expiresIn(-2 * DAY), 'critical', 'expired, status_expired'],
    [
      'status expiring_soon, date far (status wins: at least warning)',
      'expiring_soon',
      expiresIn(60 * DAY),
      'warning',
      'status_expiring_soon',
    ],
    [
      'status expiring_soon, date critical (date wins)',
      'expiring_soon',
      expiresIn(DAY),
      'critical',
      'within_critical_days, status_expiring_soon',
    ],
    ['status expired, date far (status wins)', 'expired', expiresIn(60 * DAY), 'critical', 'status_expired'],
    ['status valid, date expired (date wins)', 'valid', expiresIn(-DAY), 'critical', 'expired'],
    ['status error, no date, production: critical', 'error', null, 'critical', 'status_error'],
    ['status unknown, no date: a warning held unknown_after', 'unknown', null, 'warning', 'status_unknown'],
    [
      'status unknown, date within warn_days (date leads)',
      'unknown',
      expiresIn(5 * DAY),
      'warning',
      'within_warn_days, status_unknown',
    ],
    // An unreadable date never gets here: the client refuses the record (test/api/client-timestamps).
    [
      'date written with an offset, within warn_days',
      'valid',
      offsetTime(NOW + 5 * DAY),
      'warning',
      'within_warn_days',
    ],
    ['date written with an offset, beyond warn_days', 'valid', offsetTime(NOW + 20 * DAY), null, ''],
  ])('%s', (_name, ssl_status, ssl_expires_at, severity, reason) => {
    const findings = certificates(urlsSnapshot([urlRecord({ ssl_status, ssl_expires_at })]), options, NOW);
    expectWellFormed(findings);
    if (severity === null) return expect(findings).toEqual([]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      fingerprint: 'certificates/url/10',
      severity,
      subject: { type: 'url', id: 10 },
    });
    expect(findings[0]?.details.reason).toBe(reason);
    expect(findings[0]?.holdForMs).toBe(reason === 'status_unknown' ? DAY : undefined);
  });

  // The rules "ssl_status error follows the environment's severity" and "unknown alerts after
  // unknown_after", each with the resolution that says why it is over.
  it.each<[string, Partial<UrlRecord>, Severity | null, string, string]>([
    ['error in production', {}, 'critical', 'is in error', 'certificate renewed: valid until 2027-01-30 12:00 UTC'],
    [
      'error in staging',
      { environment_type: 'staging' },
      'warning',
      'is in error',
      'certificate renewed: valid until 2027-01-30 12:00 UTC',
    ],
    [
      'error of a record without environment, its app in production',
      { environment_type: null },
      'critical',
      'is in error',
      'certificate renewed: valid until 2027-01-30 12:00 UTC',
    ],
  ])('ssl_status error: %s', (_name, o, severity, text, resolution) => {
    const findings = certificates(
      urlsSnapshot([urlRecord({ ssl_status: 'error', ssl_expires_at: null, ...o })]),
      options,
      NOW,
    );
    expectWellFormed(findings);
    expect(findings).toMatchObject([{ severity, details: { reason: 'status_error' } }]);
    expect(findings[0]!.summary).toContain(text);
    expect(findings[0]!.holdForMs).toBeUndefined();
    const renewed = urlsSnapshot([urlRecord({ ...o, ssl_expires_at: expiresIn(90 * DAY) })]);
    expect(resolutionOf(findings[0]!, renewed, { certificates: options })).toBe(resolution);
  });

  it.each<[string, Partial<CertificatesConfig>, number | null]>([
    ['default: after a day', {}, DAY],
    ['unknown_after 6h', { unknown_after: 6 * HOUR }, 6 * HOUR],
    ['unknown_after 0s: at once', { unknown_after: 0 }, 0],
    ['unknown_after off: never', { unknown_after: null }, null],
  ])('ssl_status unknown: %s', (_name, opts, hold) => {
    const opt = { ...options, ...opts };
    const record = urlRecord({ ssl_status: 'unknown', ssl_expires_at: null });
    const findings = certificates(urlsSnapshot([record]), opt, NOW);
    expect(certificatesCheck.relevant?.(record, { certificates: opt }, NOW)).toBe(hold !== null);
    if (hold === null) return void expect(findings).toEqual([]);
    expect(findings).toMatchObject([
      { severity: 'warning', holdForMs: hold, details: { ssl_status: 'unknown', reason: 'status_unknown' } },
    ]);
    expect(findings[0]!.summary).toBe(
      `Certificate of https://shop.example.com for shop-prod (production) has been unknown to the service for more than ${formatDuration(hold)}`,
    );
    expect(presentationOf('certificates')!.nextStep!(findings[0]!)).toMatch(/cannot be read/);
    const known = urlsSnapshot([urlRecord({ ssl_expires_at: expiresIn(90 * DAY) })]);
    expect(resolutionOf(findings[0]!, known, { certificates: opt })).toBe(
      'certificate status is valid now, valid until 2027-01-30 12:00 UTC',
    );
  });

  it.each<[string, string | null, SslStatus, string]>([
    [
      'expires in days',
      expiresIn(2 * DAY + HOUR),
      'valid',
      `Certificate of https://shop.example.com for shop-prod (production) expires in 2 days (2026-11-03 13:00 UTC)`,
    ],
    [
      'expires within the day',
      expiresIn(5 * HOUR),
      'valid',
      `Certificate of https://shop.example.com for shop-prod (production) expires in 5h (${shown(5 * HOUR)})`,
    ],
    [
      'expired',
      expiresIn(-DAY),
      'expired',
      `Certificate of https://shop.example.com for shop-prod (production) expired 24h ago (${shown(-DAY)})`,
    ],
    [
      'expires in a minute under two days: hours, never "1 day"',
      expiresIn(2 * DAY - MINUTE),
      'valid',
      `Certificate of https://shop.example.com for shop-prod (production) expires in 47h 59m (${shown(2 * DAY - MINUTE)})`,
    ],
    [
      'expires in two and a half days: the nearest whole day',
      expiresIn(2 * DAY + 12 * HOUR),
      'valid',
      `Certificate of https://shop.example.com for shop-prod (production) expires in 3 days (${shown(2 * DAY + 12 * HOUR)})`,
    ],
    [
      'reported expired, date says fine',
      expiresIn(60 * DAY),
      'expired',
      `Certificate of https://shop.example.com for shop-prod (production) is reported expired by the service (expiry date ${shown(60 * DAY)})`,
    ],
    ['in error', null, 'error', 'Certificate of https://shop.example.com for shop-prod (production) is in error'],
  ])('summary: %s', (_name, ssl_expires_at, ssl_status, summary) => {
    const [finding] = certificates(urlsSnapshot([urlRecord({ ssl_status, ssl_expires_at })]), options, NOW);
    expect(finding?.summary).toBe(summary);
  });

  it('carries labels of the URL and its app, and the expiry as since once expired', () => {
    const [finding] = certificates(
      urlsSnapshot([urlRecord({ ssl_status: 'expired', ssl_expires_at: expiresIn(-DAY) })]),
      options,
      NOW,
    );
    expect(finding?.labels).toEqual({
      check: 'certificates',
      namespace: 'acme',
      project: 'shop',
      environment_type: 'production',
      app: 'shop-prod',
      server: 'web-01',
      host: 'shop.example.com',
    });
    expect(finding?.url).toBe('https://shop.example.com');
    expect(finding?.since).toBe(expiresIn(-DAY));
  });

  it('leaves out labels it does not know (app not in the snapshot, no environment)', () => {
    const record = urlRecord({ app_id: 99, project: null, environment_type: null, ssl_status: 'error' });
    const [finding] = certificates(urlsSnapshot([record], [appListItem()]), options, NOW);
    expectWellFormed([finding!]);
    expect(Object.keys(finding!.labels).sort()).toEqual(['app', 'check', 'host', 'namespace']);
    expect(finding?.url).toBe('https://shop.example.com');
  });

  it('keeps one fingerprint per URL as the severity rises', () => {
    const warn = certificates(urlsSnapshot([urlRecord({ ssl_expires_at: expiresIn(10 * DAY) })]), options, NOW);
    const crit = certificates(
      urlsSnapshot([urlRecord({ ssl_expires_at: expiresIn(10 * DAY) })]),
      options,
      NOW + 8 * DAY,
    );
    expect(warn[0]?.severity).toBe('warning');
    expect(crit[0]?.severity).toBe('critical');
    expect(crit[0]?.fingerprint).toBe(warn[0]?.fingerprint);
  });

  it('reports each URL on its own', () => {
    const urls = [
      urlRecord({ id: 10, ssl_status: 'expired' }),
      urlRecord({ id: 11, url: 'https://www.shop.example.com', ssl_status: 'valid' }),
      urlRecord({ id: 12, url: 'https://api.shop.example.com', ssl_status: 'error' }),
    ];
    expect(certificates(urlsSnapshot(urls), options, NOW).map((f) => f.fingerprint)).toEqual([
      'certificates/url/10',
      'certificates/url/12',
    ]);
  });
});
