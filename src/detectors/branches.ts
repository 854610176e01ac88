/**
 * branches: the branch an app is deployed from, as `apps.get` tells it per repository.
 *
 * - **Deleted upstream** (`repositories[].deleted_upstream`): the app still runs, but its next
 *   update cannot pull its code. Nothing is down yet, so it is a warning wherever the app runs;
 *   it lasts until the branch is back upstream or the app is deployed from another.
 * - **Behind its branch** (`up_to_date` false: the deployed commit is not the branch head), in the
 *   environments of `behind_environments` (default production): worth knowing, not worth a page.
 *   It goes to the daily digest alone (`info`, label `delivery: digest`: tracked and listed in
 *   `notify.digest`, never sent as a message of its own). `up_to_date` null (a commit unknown)
 *   says nothing; a branch deleted upstream is reported as that alone.
 *
 * Read by the maintenance job from the `apps.get` it makes of every app anyway: no request of its
 * own. One finding per app and repository, for as long as the repository is in that state; the API
 * says neither since when, so `since` is left unknown.
 */
import { z } from 'zod';
import { environmentTypeSchema } from '../api/schemas.js';
import type { MaintenanceSnapshot } from '../collectors/snapshot.js';
import type { MaintenanceApp, RepositoryView } from '../collectors/views.js';
import { checkConfig } from '../config/check-config.js';
import { DIGEST_ONLY_LABEL } from '../lib/alert-vocabulary.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { factsFrom } from './presentation.js';

/** `checks.branches`. */
export const branchesConfig = checkConfig({
  behind_environments: z
    .array(environmentTypeSchema)
    .default(['production'])
    .describe(
      'Environment types whose apps running a commit behind their branch are listed in the daily digest (notify.digest), never sent on their own; [] for none.',
    ),
});

/** The branches check. Severity: warning everywhere (of a branch deleted upstream). */
export const branchesCheck = defineCheck({
  name: 'branches',
  job: 'maintenance',
  config: branchesConfig,
  detect: branches,
  relevant: ({ app }, options) => app.repositories.some((repo) => judge(app, repo, options) !== null),
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'app', snapshot.apps, (app) => {
      const repo = app.repositories.find((r) => r.repository === alert.labels.repository);
      if (!repo) return `${alert.labels.repository ?? 'the repository'} is no longer deployed on the app`;
      if (alert.labels.problem === 'behind')
        return repo.up_to_date ? `${repo.repository} runs its branch head now` : null;
      return repo.branch === alert.labels.branch
        ? `branch ${repo.branch} is upstream again`
        : `deployed from branch ${repo.branch} now`;
    }),
  presentation: {
    noun: ['branch problem', 'branch problems'],
    facts: factsFrom(['repository', 'branch', ['deployed', 'Deployed commit'], ['head', 'Branch head']]),
    brief: (d) => (d.repository && d.branch ? `${d.repository} ${d.branch}` : null),
    nextStep: ({ labels }) =>
      labels.problem === 'behind'
        ? 'Update the app when it suits: its branch has commits it does not run yet.'
        : 'Restore the branch upstream, or deploy the app from a branch that exists, before its next update.',
  },
});

/** `checks.branches` as parsed: the detector's options. */
export type BranchesConfig = z.output<typeof branchesConfig>;

/** What is wrong with one repository of an app, if anything. */
function judge(app: MaintenanceApp, repo: RepositoryView, options: BranchesConfig): 'deleted' | 'behind' | null {
  if (repo.deleted_upstream) return 'deleted';
  const watched = app.environment_type !== null && options.behind_environments.includes(app.environment_type);
  return watched && repo.up_to_date === false ? 'behind' : null;
}

/** Finds repositories deployed from a branch deleted upstream, and watched ones behind their branch. */
export function branches(snapshot: MaintenanceSnapshot, options: BranchesConfig): Detection<'branches'>[] {
  const findings: Detection<'branches'>[] = [];
  for (const app of snapshot.apps) {
    for (const repo of app.repositories) {
      const kind = judge(app, repo, options);
      if (kind === null) continue;
      const { name } = appContext(app);
      const where = { repository: repo.repository, branch: repo.branch };
      const details: Record<string, string> = { app: name, ...where };
      if (repo.deployed_sha) details.deployed = shortSha(repo.deployed_sha);
      const behind = kind === 'behind';
      if (behind && repo.head_sha) details.head = shortSha(repo.head_sha);
      findings.push({
        ...appFinding('branches', app, 'warning', {
          ...where,
          problem: kind,
          ...(behind && DIGEST_ONLY_LABEL),
        }),
        fingerprint: fingerprint('branches', kind, app.id, repo.repository),
        // Behind its branch: a line of the digest, never a message of its own.
        ...(behind && { severity: 'info' as const }),
        summary: behind
          ? `${name} runs ${repo.repository} behind its branch ${repo.branch}`
          : `Branch ${repo.branch} of ${repo.repository}, deployed on ${name}, was deleted upstream: its next update cannot pull`,
        details,
        since: null,
      });
    }
  }
  return findings;
}

/** A commit as people quote it: its first 7 hex digits. */
function shortSha(sha: string): string {
  return sha.slice(0, 7);
}
