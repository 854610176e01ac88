import { describe, expect, it } from 'vitest';
import type { AppRepository } from '../../src/api/schemas.js';
import { detectorOptionsFromConfig, presentationOf, runDetectors } from '../../src/detectors/registry.js';
import {
  repositoryChecks,
  repositoryChecksConfig,
  type RepositoryChecksConfig,
} from '../../src/detectors/repository-checks.js';
import {
  ago,
  app,
  checksOf,
  DAY,
  expectWellFormed,
  HOUR,
  inFull,
  keptBy,
  maintenanceSnapshot,
  NOW,
  repository,
} from './fixtures.js';

const options = repositoryChecksConfig.parse({ enabled: true });

const findingsOf = (repos: Partial<AppRepository>[], deployed = true, o: RepositoryChecksConfig = options) =>
  repositoryChecks(
    maintenanceSnapshot([
      app({ id: 4, deployed_at: deployed ? ago(30 * DAY) : null, repositories: repos.map(repository) }),
    ]),
    o,
    NOW,
  );

describe('repository_checks', () => {
  it.each<[string, Partial<AppRepository>, boolean, string[]]>([
    ['read an hour ago', {}, true, []],
    ['read just under max_age ago', { checked_at: ago(2 * DAY - HOUR) }, true, []],
    ['not read for 3 days', { checked_at: ago(3 * DAY) }, true, ['repository_checks/4/shop']],
    ['never read, the app deployed', { checked_at: null }, true, ['repository_checks/4/shop']],
    ['never read, the app never deployed', { checked_at: null }, false, []],
    [
      'not read for 3 days, deleted upstream (the branches check’s)',
      { checked_at: ago(3 * DAY), deleted_upstream: true },
      true,
      [],
    ],
    ['read at a time nobody can parse', { checked_at: 'sometime yesterday' }, true, []],
  ])('a repository %s', (_name, repo, deployed, prints) => {
    const findings = findingsOf([repo], deployed);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(prints);
  });

  it('alerts a stale repository as a warning, labelled with its repository and branch, since it grew too old', () => {
    expect(findingsOf([{ checked_at: ago(3 * DAY) }])[0]).toEqual({
      fingerprint: 'repository_checks/4/shop',
      check: 'repository_checks',
      severity: 'warning',
      summary: 'The platform has not read shop, deployed on shop-prod (production), for 3d (more than 2d)',
      details: {
        app: 'shop-prod (production)',
        repository: 'shop',
        branch: 'main',
        max_age: '2d',
        checked_at: ago(3 * DAY),
        unread_for: '3d',
      },
      labels: {
        check: 'repository_checks',
        namespace: 'acme',
        project: 'shop',
        environment_type: 'production',
        app: 'shop-prod',
        server: 'web-01',
        repository: 'shop',
        branch: 'main',
      },
      url: 'https://shop.example.com',
      since: ago(DAY),
      subject: { type: 'app', id: 4 },
    });
  });

  it('one unreadable time is one bad record: the other repositories and apps are judged', () => {
    const findings = repositoryChecks(
      maintenanceSnapshot([
        app({
          id: 4,
          repositories: [
            repository({ checked_at: 'sometime yesterday' }),
            repository({ repository: 'oca-addons', main: false, checked_at: ago(4 * DAY) }),
          ],
        }),
        app({ id: 5, repositories: [repository({ checked_at: null })] }),
      ]),
      options,
      NOW,
    );
    expect(findings.map((f) => f.fingerprint)).toEqual(['repository_checks/4/oca-addons', 'repository_checks/5/shop']);
    expect(findings[1]).toMatchObject({
      since: null,
      summary: 'The platform has never read shop, deployed on shop-prod (production)',
    });
  });

  it('is presented with its repository, branch and last read', () => {
    const { findings } = runDetectors(
      maintenanceSnapshot([app({ repositories: [repository({ checked_at: ago(3 * DAY) })] })]),
      { repository_checks: options },
      NOW,
    );
    expect(findings).toMatchObject([
      {
        facts: [
          { label: 'Repository', value: 'shop' },
          { label: 'Branch', value: 'main' },
          { label: 'Last read', value: expect.any(String) },
          { label: 'Allowed without a read', value: '2d' },
        ],
        brief: 'shop not read for 3d',
      },
    ]);
    expect(presentationOf('repository_checks')!.nextStep!(findings[0]!)).toMatch(/^Find why the platform cannot read/);
  });

  it('keeps for the maintenance job only the apps it could report', () => {
    const kept = keptBy(
      'maintenance',
      'checks: { repository_checks: { enabled: true }, maintenance: { enabled: false }, branches: { enabled: false }, upgrades: { enabled: false }, restore_points: { enabled: false } }',
      {
        fresh: inFull(app({ repositories: [repository()] })),
        stale: inFull(app({ repositories: [repository({ checked_at: ago(3 * DAY) })] })),
      },
    );
    expect(kept).toEqual(['stale']);
  });
});

describe('checks.repository_checks', () => {
  it.each([
    ['', undefined],
    ['checks: { repository_checks: { enabled: true } }', { enabled: true, max_age: 2 * DAY }],
    ['checks: { repository_checks: { enabled: true, max_age: 6h } }', { enabled: true, max_age: 6 * HOUR }],
    ['checks: { repository_checks: { enabled: false } }', undefined],
  ] as const)('%j gives the options %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).repository_checks).toEqual(expected);
  });

  it.each([
    ['checks: { repository_checks: { max_age: 2 } }', 'max_age'],
    ['checks: { repository_checks: { max_age: off } }', 'max_age'],
    ['checks: { repository_checks: { stale: true } }', 'stale'],
  ])('refuses %s', (yaml, message) => {
    expect(() => checksOf(yaml)).toThrow(message);
  });
});
