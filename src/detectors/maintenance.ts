/**
 * maintenance: an app left in maintenance (users see the maintenance page) for longer than
 * `max_duration`.
 *
 * The API says whether an app is in maintenance, not since when. So the detector reports every app
 * in maintenance with `holdForMs` = `max_duration`, and the lifecycle fires the alert only once it
 * has seen the app in maintenance continuously that long. Taking the app out resolves it (or, if it
 * never fired, forgets it silently).
 */
import type { z } from 'zod';
import type { MaintenanceSnapshot } from '../collectors/snapshot.js';
import { checkConfig } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import { heldFromFirstSighting, type Detection } from './finding.js';
import { formatDuration } from '../lib/format-duration.js';
import { factsFrom } from './presentation.js';

/** `checks.maintenance`. */
export const maintenanceConfig = checkConfig({
  max_duration: durationSchema.prefault('2h').describe('An app in maintenance mode longer than this is alerted.'),
});

/** The maintenance check. Severity: warning everywhere. */
export const maintenanceCheck = defineCheck({
  name: 'maintenance',
  job: 'maintenance',
  config: maintenanceConfig,
  detect: maintenance,
  relevant: ({ app }) => app.maintenance,
  resolution: (alert, snapshot) => recordResolution(alert, 'app', snapshot.apps, () => 'maintenance mode switched off'),
  presentation: {
    noun: ['app in maintenance', 'apps in maintenance'],
    facts: factsFrom(['state', ['max_duration', 'Allowed']]),
    nextStep: () => 'If the work on the app is done, take it out of maintenance mode.',
  },
});

/** `checks.maintenance` as parsed: the detector's options. */
export type MaintenanceConfig = z.output<typeof maintenanceConfig>;

/** Finds apps in maintenance; each held back by the lifecycle for `max_duration`. */
export function maintenance(snapshot: MaintenanceSnapshot, options: MaintenanceConfig): Detection<'maintenance'>[] {
  const findings: Detection<'maintenance'>[] = [];
  for (const app of snapshot.apps) {
    if (!app.maintenance) continue;
    const { name } = appContext(app);
    const max = formatDuration(options.max_duration);
    findings.push({
      ...appFinding('maintenance', app, 'warning'),
      summary: `${name} has been in maintenance for more than ${max}`,
      details: { app: name, state: app.state, max_duration: max },
      // The source does not say when maintenance began; the lifecycle's first sighting stands in.
      since: null,
      ...heldFromFirstSighting(options.max_duration, 'checks.maintenance.max_duration'),
    });
  }
  return findings;
}
