import { describe, expect, it } from 'vitest';
import type { AppRepository, EnvironmentType } from '../../src/api/schemas.js';
import { branches, branchesConfig, type BranchesConfig } from '../../src/detectors/branches.js';
import { detectorOptionsFromConfig, presentationOf, runDetectors } from '../../src/detectors/registry.js';
import { app, checksOf, expectWellFormed, inFull, keptBy, maintenanceSnapshot, NOW, repository } from './fixtures.js';

const options = branchesConfig.parse({});
const HEAD = 'ffffffffffffffffffffffffffffffffffffffff';
const BEHIND: Partial<AppRepository> = { up_to_date: false, head_sha: HEAD };

const findingsOf = (
  repos: Partial<AppRepository>[],
  environment_type: EnvironmentType | null = 'production',
  o: BranchesConfig = options,
) => branches(maintenanceSnapshot([app({ id: 4, environment_type, repositories: repos.map(repository) })]), o);

describe('branches', () => {
  it.each<[string, Partial<AppRepository>, EnvironmentType | null, string[]]>([
    ['up to date', {}, 'production', []],
    ['deleted upstream', { deleted_upstream: true }, 'production', ['branches/deleted/4/shop']],
    ['deleted upstream, in development', { deleted_upstream: true }, 'development', ['branches/deleted/4/shop']],
    [
      'deleted upstream and behind: the deletion alone',
      { deleted_upstream: true, ...BEHIND },
      'production',
      ['branches/deleted/4/shop'],
    ],
    ['behind, in production', BEHIND, 'production', ['branches/behind/4/shop']],
    ['behind, in staging (not watched by default)', BEHIND, 'staging', []],
    ['behind, outside any environment', BEHIND, null, []],
    ['a commit unknown (up_to_date null)', { up_to_date: null, deployed_sha: null }, 'production', []],
  ])('a repository %s', (_name, repo, env, prints) => {
    const findings = findingsOf([repo], env);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(prints);
  });

  it.each<[string, Partial<AppRepository>, string, string]>([
    [
      'deleted upstream',
      { deleted_upstream: true },
      'warning',
      'Branch main of shop, deployed on shop-prod (production), was deleted upstream: its next update cannot pull',
    ],
    ['behind', BEHIND, 'info', 'shop-prod (production) runs shop behind its branch main'],
  ])('%s is %s: "%s"', (_name, repo, severity, summary) => {
    expect(findingsOf([repo])[0]).toMatchObject({ severity, summary });
  });

  it('alerts a branch deleted upstream, labelled with its repository and branch', () => {
    expect(findingsOf([{ deleted_upstream: true }])[0]).toEqual({
      fingerprint: 'branches/deleted/4/shop',
      check: 'branches',
      severity: 'warning',
      summary:
        'Branch main of shop, deployed on shop-prod (production), was deleted upstream: its next update cannot pull',
      details: { app: 'shop-prod (production)', repository: 'shop', branch: 'main', deployed: '1a2b3c4' },
      labels: {
        check: 'branches',
        namespace: 'acme',
        project: 'shop',
        environment_type: 'production',
        app: 'shop-prod',
        server: 'web-01',
        repository: 'shop',
        branch: 'main',
        problem: 'deleted',
      },
      url: 'https://shop.example.com',
      since: null,
      subject: { type: 'app', id: 4 },
    });
  });

  it('sends a repository behind its branch to the digest alone, with both commits', () => {
    const [finding] = findingsOf([BEHIND]);
    expect(finding?.labels).toMatchObject({ check: 'branches', delivery: 'digest', repository: 'shop' });
    expect(finding?.details).toMatchObject({ deployed: '1a2b3c4', head: 'fffffff' });
  });

  it('reports each repository of an app on its own', () => {
    const findings = findingsOf([{ deleted_upstream: true }, { repository: 'oca-addons', main: false, ...BEHIND }]);
    expect(findings.map((f) => f.fingerprint)).toEqual(['branches/deleted/4/shop', 'branches/behind/4/oca-addons']);
  });

  it.each<[EnvironmentType[], EnvironmentType, boolean]>([
    [[], 'production', false],
    [['staging'], 'staging', true],
    [['production', 'development'], 'development', true],
  ])('behind_environments %j: behind in %s is reported: %s', (behind_environments, env, reported) => {
    expect(findingsOf([BEHIND], env, { ...options, behind_environments })).toHaveLength(reported ? 1 : 0);
  });

  it('is presented with its repository, branch and commits', () => {
    const { findings } = runDetectors(
      maintenanceSnapshot([app({ repositories: [repository({ deleted_upstream: true })] })]),
      { branches: options },
      NOW,
    );
    expect(findings).toMatchObject([
      {
        facts: [
          { label: 'Repository', value: 'shop' },
          { label: 'Branch', value: 'main' },
          { label: 'Deployed commit', value: '1a2b3c4' },
        ],
        brief: 'shop main',
      },
    ]);
  });
});

describe('the next step', () => {
  it.each<[string, Partial<AppRepository>, RegExp]>([
    ['deleted upstream', { deleted_upstream: true }, /^Restore the branch upstream/],
    ['behind', BEHIND, /^Update the app when it suits/],
  ])('of a branch %s', (_name, repo, step) => {
    const [finding] = findingsOf([repo]);
    expect(presentationOf('branches')!.nextStep!(finding!)).toMatch(step);
  });
});

describe('checks.branches', () => {
  it.each([
    ['', { enabled: true, behind_environments: ['production'] }],
    ['checks: { branches: { behind_environments: [] } }', { enabled: true, behind_environments: [] }],
    [
      'checks: { branches: { behind_environments: [production, staging] } }',
      { enabled: true, behind_environments: ['production', 'staging'] },
    ],
    ['checks: { branches: { enabled: false } }', undefined],
  ] as const)('%j gives the options %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).branches).toEqual(expected);
  });

  it.each([
    ['checks: { branches: { behind_environments: [prod] } }', 'behind_environments'],
    ['checks: { branches: { behind: true } }', 'behind'],
  ])('refuses %s', (yaml, message) => {
    expect(() => checksOf(yaml)).toThrow(message);
  });
});

describe('what the maintenance job keeps for branches', () => {
  const records = {
    'deleted upstream in development': inFull(
      app({
        environment_type: 'development',
        repositories: [repository({ deleted_upstream: true })],
      }),
    ),
    'behind in production': inFull(app({ repositories: [repository(BEHIND)] })),
    'behind in staging': inFull(app({ environment_type: 'staging', repositories: [repository(BEHIND)] })),
    'up to date in production': inFull(app({ repositories: [repository()] })),
    'in maintenance': inFull(app({ maintenance: true })),
  };

  it.each([
    ['both checks on', '', ['deleted upstream in development', 'behind in production', 'in maintenance']],
    [
      'maintenance off',
      'checks: { maintenance: { enabled: false } }',
      ['deleted upstream in development', 'behind in production'],
    ],
    ['branches off', 'checks: { branches: { enabled: false } }', ['in maintenance']],
  ])('%s: keeps the apps a check could report', (_name, yaml, kept) => {
    expect(keptBy('maintenance', yaml, records)).toEqual(kept);
  });
});
