import { describe, expect, it } from 'vitest';
import type { UrlRecord } from '../../src/api/schemas.js';
import { urlChecks } from '../../src/detectors/url-checks.js';
import { appListItem, expectWellFormed, urlRecord, urlsSnapshot } from './fixtures.js';

describe('urlChecks', () => {
  it.each<[string, Partial<UrlRecord>, boolean]>([
    ['passed', { public_check: 'passed' }, false],
    ['not checked (null) is not a failure', { public_check: null, public_check_code: 'not_checked_yet' }, false],
    ['failed', { public_check: 'failed', public_check_code: 'wrong_app' }, true],
    ['failed without a code', { public_check: 'failed', public_check_code: null }, true],
  ])('%s', (_name, o, fails) => {
    const findings = urlChecks(urlsSnapshot([urlRecord(o)]), {});
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(fails ? ['url_checks/url/10'] : []);
  });

  it('names the URL, the app and what the check found', () => {
    const [finding] = urlChecks(
      urlsSnapshot([urlRecord({ public_check: 'failed', public_check_code: 'dns_mismatch' })]),
      {},
    );
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

  it('is a warning outside production unless the table says otherwise', () => {
    const staging = appListItem({ id: 2, name: 'shop-staging', environment_type: 'staging', url: null, server: null });
    const record = urlRecord({ app_id: 2, app: 'shop-staging', environment_type: 'staging', public_check: 'failed' });
    const [finding] = urlChecks(urlsSnapshot([record], [staging]), {});
    expect(finding?.severity).toBe('warning');
    expect(finding?.summary).toBe('https://shop.example.com does not answer as shop-staging (staging)');
    // The app has no URL of its own: the record's URL is the link.
    expect(finding?.url).toBe('https://shop.example.com');
    expect(finding?.labels.server).toBeUndefined();
    expect(urlChecks(urlsSnapshot([record], [staging]), { severity: { staging: 'critical' } })[0]?.severity).toBe(
      'critical',
    );
  });
});
