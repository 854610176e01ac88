import { describe, expect, it } from 'vitest';
import { maintenance, maintenanceConfig } from '../../src/detectors/maintenance.js';
import { app, expectWellFormed, HOUR, maintenanceSnapshot } from './fixtures.js';

describe('maintenance', () => {
  it.each([
    ['in maintenance', true, ['maintenance/app/1']],
    ['not in maintenance', false, []],
  ])('%s', (_name, on, expected) => {
    const findings = maintenance(
      maintenanceSnapshot([app({ maintenance: on })]),
      maintenanceConfig.parse({ max_duration: '2h' }),
    );
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(expected);
  });

  it('asks the lifecycle to hold the alert for max_duration, since the API gives no start', () => {
    const [finding] = maintenance(
      maintenanceSnapshot([app({ maintenance: true })]),
      maintenanceConfig.parse({ max_duration: '2h' }),
    );
    expect(finding).toMatchObject({
      severity: 'warning',
      summary: 'shop-prod (production) has been in maintenance for more than 2h',
      holdForMs: 2 * HOUR,
      // What `alerts` says while it waits: the key that sets the wait.
      holdReason: 'told once seen for 2h (checks.maintenance.max_duration): the service does not say since when',
      since: null,
      url: 'https://shop.example.com',
      subject: { type: 'app', id: 1 },
      labels: { check: 'maintenance', app: 'shop-prod', environment_type: 'production', server: 'web-01' },
    });
  });

  it('leaves out unknown labels, a warning outside any environment', () => {
    const a = app({ id: 5, name: 'tools', environment_type: null, server: null, url: null, maintenance: true });
    const [finding] = maintenance(maintenanceSnapshot([a]), maintenanceConfig.parse({ max_duration: '1h' }));
    expectWellFormed([finding!]);
    expect(finding?.severity).toBe('warning');
    expect(finding?.labels).toEqual({ check: 'maintenance', namespace: 'acme', project: 'shop', app: 'tools' });
    expect(finding?.summary).toBe('tools has been in maintenance for more than 1h');
  });
});
