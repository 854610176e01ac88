/**
 * undo_copies: a restore point whose database copy from before its change is still held
 * (`instant_undo`) more than `grace` (default 1d) past its `kept_until`: the platform said it would
 * let the copy go by then, and a copy it forgot keeps taking the server's disk. A warning wherever
 * the app runs; it resolves once the copy is let go or the point leaves the app's newest.
 *
 * Read from the restore points the maintenance job reads for it (`reads`), one more request per
 * app: off unless `checks.undo_copies.enabled` says so, as restore_points is.
 */
import type { NewestRestorePoint } from '../collectors/views.js';
import { checkConfig, offByDefaultSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { defineCheck } from './define-check.js';
import { fingerprint } from './fingerprint.js';
import { factsFrom } from './presentation.js';
import { recordResolution } from './record-resolution.js';

/** `checks.undo_copies`. */
const undoCopiesConfig = checkConfig({
  enabled: offByDefaultSchema('it reads restore_points.list once per app each maintenance cycle.'),
  grace: durationSchema.prefault('1d').describe('How long past kept_until a held copy is left to the platform.'),
});

/** Whether `point` still holds its copy more than `graceMs` past its `kept_until`. */
const overdue = (point: NewestRestorePoint, graceMs: number, now: number): boolean => {
  const keptUntil = parseTime(point.kept_until);
  return point.instant_undo && keptUntil !== null && now > keptUntil + graceMs;
};

/** The undo_copies check. Severity: warning everywhere. */
export const undoCopiesCheck = defineCheck({
  name: 'undo_copies',
  job: 'maintenance',
  reads: ['restore_points'],
  config: undoCopiesConfig,
  detect: (snapshot, options, now) =>
    snapshot.apps.flatMap((app) =>
      (snapshot.restorePoints.get(app.id) ?? [])
        .filter((point) => overdue(point, options.grace, now))
        .map((point) => {
          const { name } = appContext(app);
          const keptUntil = toIso(point.kept_until) ?? ''; // overdue: it reads
          return {
            ...appFinding('undo_copies', app, 'warning'),
            fingerprint: fingerprint('undo_copies', 'copy', point.id),
            summary: `${name} still holds the database copy of restore point #${point.id}, kept until ${keptUntil}`,
            details: { app: name, restore_point: `#${point.id}`, kept_until: keptUntil },
            since: keptUntil,
          };
        }),
    ),
  relevant: ({ restorePoints }, options, now) => restorePoints?.some((p) => overdue(p, options.grace, now)) ?? false,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'app', snapshot.apps, (app) =>
      snapshot.restorePoints.get(app.id)?.some((p) => `#${p.id}` === alert.details.restore_point && p.instant_undo)
        ? null
        : `the copy of restore point ${alert.details.restore_point ?? ''} was let go`,
    ),
  presentation: {
    noun: ['database copy kept past its time', 'database copies kept past their time'],
    facts: factsFrom(['restore_point', ['kept_until', 'Kept until', 'time']]),
    nextStep: () => 'Let the copy go on the platform, or ask why its cleanup did not.',
  },
});
