/**
 * restore_points: an app held at a restore point (`held`: it was rolled back to that point, and its
 * auto-updates wait). Nothing is down, but the app gets no update (nor the fixes in one) until
 * someone lets the point go: a warning wherever the app runs, for as long as the point is held.
 *
 * Only `restore_points.list` says it: no answer the other checks read carries restore points, so
 * with this check on the maintenance job reads one more small page per app each cycle (its newest
 * points, `RESTORE_POINTS_PER_APP`). That doubles the job's requests, so the check is off unless
 * `checks.restore_points.enabled` says so. A point that failed or was kept (the change failed) is
 * the failed run's story, which failed_runs tells; this check says only what outlasts the run.
 *
 * One finding per held point; the API says when the point was made, not since when it is held, so
 * `since` is left unknown.
 */
import type { MaintenanceSnapshot } from '../collectors/snapshot.js';
import { checkConfig, offByDefaultSchema } from '../config/check-config.js';
import { toIso } from '../lib/parse-time.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { knownValues } from './build-labels.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { factsFrom } from './presentation.js';

/** The restore_points check. Severity: warning everywhere. */
export const restorePointsCheck = defineCheck({
  name: 'restore_points',
  job: 'maintenance',
  // No other answer carries an app's restore points: its collector reads them for this check alone.
  reads: ['restore_points'],
  config: checkConfig({
    enabled: offByDefaultSchema(
      'it reads restore_points.list once per app each maintenance cycle (no other answer carries restore points).',
    ),
  }),
  detect: restorePoints,
  relevant: ({ restorePoints: points }) => points?.some((p) => p.held) ?? false,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'app', snapshot.apps, (app) => {
      const point = snapshot.restorePoints.get(app.id)?.find((p) => `#${p.id}` === alert.details.restore_point);
      if (!point)
        return `restore point ${alert.details.restore_point ?? ''} is no longer among the app's newest`.trim();
      return point.held ? null : `restore point #${point.id} was let go`;
    }),
  presentation: {
    noun: ['app held at a restore point', 'apps held at a restore point'],
    facts: factsFrom(['restore_point', ['action', 'Change'], ['at', 'Made at', 'time'], 'outcome', 'run']),
    brief: (d) => (d.restore_point ? `held at restore point ${d.restore_point}` : null),
    nextStep: () =>
      'Once what made the rollback necessary is fixed, let the restore point go on the platform so the app is updated again.',
  },
});

/** Finds every restore point an app is held at. */
export function restorePoints(snapshot: MaintenanceSnapshot): Detection<'restore_points'>[] {
  const findings: Detection<'restore_points'>[] = [];
  for (const app of snapshot.apps) {
    for (const point of snapshot.restorePoints.get(app.id) ?? []) {
      if (!point.held) continue;
      const { name } = appContext(app);
      const run = point.run_id === null ? null : `#${point.run_id}`;
      const known = knownValues({ action: point.action, at: toIso(point.at), run });
      const details = { app: name, restore_point: `#${point.id}`, outcome: point.outcome, ...known };
      findings.push({
        ...appFinding('restore_points', app, 'warning'),
        fingerprint: fingerprint('restore_points', 'held', point.id),
        summary: `${name} was rolled back to restore point #${point.id}${point.action ? ` (from before its ${point.action})` : ''} and is held there: its auto-updates wait until the point is let go`,
        details,
        since: null,
      });
    }
  }
  return findings;
}
