import { describe, expect, it } from 'vitest';
import type { UrlRecord } from '../../src/api/schemas.js';
import { urlChecks, urlChecksCheck, urlChecksConfig, type UrlChecksConfig } from '../../src/detectors/url-checks.js';
import { runDetectors } from '../../src/detectors/registry.js';
import {
  ago,
  appListItem,
  DAY,
  expectWellFormed,
  HOUR,
  NOW,
  resolutionOf,
  urlRecord,
  urlsSnapshot,
} from './fixtures.js';

const options = urlChecksConfig.parse({ max_check_age: '12h' });
const detect = (records: UrlRecord[], o: Partial<UrlChecksConfig> = {}, apps = [appListItem()]) =>
  urlChecks(urlsSnapshot(records, apps), { ...options, ...o }, NOW);

describe('urlChecks', () => {
  it.each<[string, Partial<UrlRecord>, boolean]>([
    ['passed', { public_check: 'passed' }, false],
    ['failed', { public_check: 'failed', public_check_code: 'wrong_app' }, true],
    ['failed without a code', { public_check: 'failed', public_check_code: null }, true],
    ['failed long ago: still the failure alone', { public_check: 'failed', public_checked_at: ago(3 * DAY) }, true],
  ])('%s', (_name, o, fails) => {
    const findings = detect([urlRecord(o)]);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(fails ? ['url_checks/url/10'] : []);
  });

  // The rule "a URL the outside check has not judged for max_check_age", with the resolution that
  // says why it is over once the check runs again.
  it.each<[string, Partial<UrlRecord>, Partial<UrlChecksConfig>, { summary: string; hold?: number } | null]>([
    ['checked an hour ago', { public_checked_at: ago(HOUR) }, {}, null],
    ['checked exactly max_check_age ago', { public_checked_at: ago(12 * HOUR) }, {}, null],
    [
      'passed, but the check has not run since',
      { public_checked_at: ago(13 * HOUR) },
      {},
      {
        summary:
          'https://shop.example.com of shop-prod (production) has not been checked from outside for 13h (last: passed)',
      },
    ],
    [
      'not checked, the code says why, the last check long ago',
      { public_check: null, public_check_code: 'dns_not_configured', public_checked_at: ago(2 * DAY) },
      {},
      {
        summary:
          'https://shop.example.com of shop-prod (production) has not been checked from outside for 2d: not checked (dns_not_configured)',
      },
    ],
    [
      'never checked, the code says why: held max_check_age from the first sighting',
      { public_check: null, public_check_code: 'dns_not_configured', public_checked_at: null },
      {},
      {
        summary:
          'https://shop.example.com of shop-prod (production) has not been checked from outside for more than 12h (dns_not_configured)',
        hold: 12 * HOUR,
      },
    ],
    [
      'never checked, no code: held the same',
      { public_check: null, public_check_code: null, public_checked_at: null },
      {},
      {
        summary:
          'https://shop.example.com of shop-prod (production) has not been checked from outside for more than 12h',
        hold: 12 * HOUR,
      },
    ],
    ['a verdict without a time stands: not aged', { public_checked_at: null }, {}, null],
    ['max_check_age off', { public_check: null, public_checked_at: ago(9 * DAY) }, { max_check_age: null }, null],
  ])('%s', (_name, o, opts, expected) => {
    const findings = detect([urlRecord(o)], opts);
    expectWellFormed(findings);
    if (expected === null) return void expect(findings).toEqual([]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      fingerprint: 'url_checks/url/10/unchecked',
      severity: 'warning',
      summary: expected.summary,
      labels: { check: 'url_checks', problem: 'unchecked', app: 'shop-prod' },
      subject: { type: 'url', id: 10 },
    });
    expect(findings[0]?.holdForMs).toBe(expected.hold);
    // Kept by the URLs collector, so it is judged every cycle.
    expect(urlChecksCheck.relevant?.(urlRecord(o), { url_checks: { ...options, ...opts } }, NOW)).toBe(true);
  });

  it('says why an unchecked URL is over once the outside check ran', () => {
    const stale = urlRecord({ public_checked_at: ago(13 * HOUR) });
    const [alert] = runDetectors(urlsSnapshot([stale]), { url_checks: options }, NOW).findings;
    const checkedNow = urlsSnapshot([urlRecord({ public_checked_at: ago(0) })]);
    expect(resolutionOf(alert!, checkedNow, { url_checks: options })).toBe(
      'outside check passed at 2026-11-01 12:00 UTC',
    );
    expect(runDetectors(checkedNow, { url_checks: options }, NOW).findings).toEqual([]);
  });

  it('names the URL, the app and what the check found', () => {
    const [finding] = detect([urlRecord({ public_check: 'failed', public_check_code: 'dns_mismatch' })]);
    expect(finding).toMatchObject({
      check: 'url_checks',
      severity: 'critical',
      summary: 'https://shop.example.com does not answer as shop-prod (production): dns_mismatch',
      details: { url: 'https://shop.example.com', code: 'dns_mismatch' },
      labels: {
        check: 'url_checks',
        app: 'shop-prod',
        server: 'web-01',
        host: 'shop.example.com',
        environment_type: 'production',
      },
      url: 'https://shop.example.com',
      subject: { type: 'url', id: 10 },
    });
    expect(finding?.summary.endsWith(': dns_mismatch')).toBe(true);
  });

  it('is a warning outside production', () => {
    const staging = appListItem({ id: 2, name: 'shop-staging', environment_type: 'staging', url: null, server: null });
    const record = urlRecord({ app_id: 2, app: 'shop-staging', environment_type: 'staging', public_check: 'failed' });
    const [finding] = detect([record], {}, [staging]);
    expect(finding?.severity).toBe('warning');
    expect(finding?.summary).toBe('https://shop.example.com does not answer as shop-staging (staging)');
    // The app has no URL of its own: the record's URL is the link.
    expect(finding?.url).toBe('https://shop.example.com');
    expect(finding?.labels.server).toBeUndefined();
  });
});
