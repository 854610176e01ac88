/**
 * repository_checks: an app whose platform has stopped reading one of its repositories
 * (`apps.get` `repositories[].checked_at` older than `max_age`, default 2d, or null while the app
 * is deployed). A revoked deploy key, a repository moved or made private: the platform's view of
 * the branch goes stale, so an update pulls nothing new and the branches check judges from old
 * facts. It parallels url_checks' outside check that stopped running; a warning wherever the app runs.
 *
 * A repository whose branch was deleted upstream is the branches check's story and is skipped. A
 * `checked_at` that cannot be read says nothing either way: that repository alone is left unjudged
 * (the client has set such an app aside as a bad record, its alerts held, before it gets here).
 *
 * Off unless `checks.repository_checks.enabled` says so: the reference does not say how often the
 * platform reads a repository, and on a platform that reads them only at a deploy every quiet app
 * would be reported. Set `max_age` above the platform's own cadence when switching it on.
 *
 * Read by the maintenance job from the `apps.get` it makes of every app anyway: no request of its
 * own. One finding per app and repository; it resolves when the repository is read again, leaves
 * the app, or the app goes.
 */
import { z } from 'zod';
import type { MaintenanceSnapshot } from '../collectors/snapshot.js';
import type { MaintenanceApp, RepositoryView } from '../collectors/views.js';
import { checkConfig, offByDefaultSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { formatDuration } from '../lib/format-duration.js';
import { formatUtc } from '../lib/format-utc.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { defineCheck } from './define-check.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { recordResolution } from './record-resolution.js';

/** `checks.repository_checks`. */
export const repositoryChecksConfig = checkConfig({
  enabled: offByDefaultSchema(
    "how often the platform reads a repository is not documented; set max_age above the platform's cadence when switching it on.",
  ),
  max_age: durationSchema
    .prefault('2d')
    .describe(
      'A repository of an app that the platform has not read for this long (repositories[].checked_at older, or null while the app is deployed) is alerted as a warning.',
    ),
});

/** The repository_checks check (`checks.repository_checks`). Severity: warning everywhere. */
export const repositoryChecksCheck = defineCheck({
  name: 'repository_checks',
  job: 'maintenance',
  config: repositoryChecksConfig,
  detect: repositoryChecks,
  relevant: ({ app }, options, now) => app.repositories.some((repo) => unreadFor(app, repo, options, now) !== null),
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'app', snapshot.apps, (app) => {
      const repo = app.repositories.find((r) => r.repository === alert.labels.repository);
      if (!repo) return `${alert.labels.repository ?? 'the repository'} is no longer on the app`;
      const at = parseTime(repo.checked_at);
      return at === null ? null : `${repo.repository} read by the platform at ${formatUtc(at, 'reading')}`;
    }),
  presentation: {
    noun: ['repository not read', 'repositories not read'],
    facts: factsFrom([
      'repository',
      'branch',
      ['checked_at', 'Last read', 'time'],
      ['max_age', 'Allowed without a read'],
    ]),
    brief: (d) => (d.repository ? `${d.repository} not read${d.unread_for ? ` for ${d.unread_for}` : ''}` : null),
    nextStep: () =>
      'Find why the platform cannot read the repository (a revoked deploy key, a repository moved or made private) and restore its access; until then updates pull nothing new.',
  },
});

/** `checks.repository_checks` as parsed: the detector's options. */
export type RepositoryChecksConfig = z.output<typeof repositoryChecksConfig>;

/**
 * How long the platform has not read the repository, when that is a problem: `age` in ms since
 * its last read `at`, or `never` (never read while the app is deployed); null when it is fine,
 * unknown (an unreadable time) or the branches check's (deleted upstream).
 */
export function unreadFor(
  app: MaintenanceApp,
  repo: RepositoryView,
  options: RepositoryChecksConfig,
  now: number,
): { age: number; at: number } | 'never' | null {
  if (repo.deleted_upstream) return null;
  if (repo.checked_at === null) return app.deployed_at === null ? null : 'never';
  const at = parseTime(repo.checked_at);
  if (at === null) return null;
  return now - at > options.max_age ? { age: now - at, at } : null;
}

/** Finds the repositories of deployed apps that the platform has not read for `max_age`. */
export function repositoryChecks(
  snapshot: MaintenanceSnapshot,
  options: RepositoryChecksConfig,
  now: number,
): Detection<'repository_checks'>[] {
  const findings: Detection<'repository_checks'>[] = [];
  for (const app of snapshot.apps) {
    for (const repo of app.repositories) {
      const unread = unreadFor(app, repo, options, now);
      if (unread === null) continue;
      const { name } = appContext(app);
      const maxAge = formatDuration(options.max_age);
      const where = { repository: repo.repository, branch: repo.branch };
      const details: Record<string, string> = { app: name, ...where, max_age: maxAge };
      const checked = toIso(repo.checked_at);
      if (checked) details.checked_at = checked;
      if (unread !== 'never') details.unread_for = formatDuration(unread.age);
      findings.push({
        ...appFinding('repository_checks', app, 'warning', where),
        fingerprint: fingerprint('repository_checks', app.id, repo.repository),
        summary: oneLine(
          unread === 'never'
            ? `The platform has never read ${repo.repository}, deployed on ${name}`
            : `The platform has not read ${repo.repository}, deployed on ${name}, for ${details.unread_for} (more than ${maxAge})`,
        ),
        details,
        // The problem began once the last read grew older than max_age.
        since: unread === 'never' ? null : new Date(unread.at + options.max_age).toISOString(),
      });
    }
  }
  return findings;
}
