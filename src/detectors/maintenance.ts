/**
 * maintenance: an app left in maintenance (users see the maintenance page) for longer than
 * `max_duration`.
 *
 * The API says whether an app is in maintenance, not since when. So the detector reports every app
 * in maintenance with `holdForMs` = `max_duration`, and the lifecycle fires the alert only once it
 * has seen the app in maintenance continuously that long. Taking the app out resolves it (or, if it
 * never fired, forgets it silently).
 */
import type { MaintenanceSnapshot } from '../collectors/snapshot.js';
import type { MaintenanceApp } from '../collectors/views.js';
import { checkConfig } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import { WARNING_EVERYWHERE } from './environment-severity.js';
import type { Detection } from './finding.js';
import { formatDuration } from '../lib/format-duration.js';
import { factsFrom } from './presentation.js';

/** Options of the maintenance check (`checks.maintenance`). Severity: warning everywhere. */
export interface MaintenanceOptions {
  /** How long an app may stay in maintenance before it is reported. */
  maxDurationMs: number;
}

/** The maintenance check. */
export const maintenanceCheck = defineCheck({
  name: 'maintenance',
  job: 'maintenance',
  config: checkConfig({
    max_duration: durationSchema.prefault('2h').describe('An app in maintenance mode longer than this is alerted.'),
  }),
  options: (own): MaintenanceOptions | undefined => (own.enabled ? { maxDurationMs: own.max_duration } : undefined),
  detect: maintenance,
  relevant: ({ app }) => inMaintenance(app),
  resolution: (alert, snapshot) => recordResolution(alert, 'app', snapshot.apps, () => 'maintenance mode switched off'),
  presentation: {
    noun: ['app in maintenance', 'apps in maintenance'],
    facts: factsFrom(['state', ['max_duration', 'Allowed']]),
    nextStep: () => 'If the work on the app is done, take it out of maintenance mode.',
  },
});

/** Whether the app is in maintenance: a finding, and an app the maintenance collector keeps. */
export function inMaintenance(app: MaintenanceApp): boolean {
  return app.maintenance;
}

/** Finds apps in maintenance; each held back by the lifecycle for `maxDurationMs`. */
export function maintenance(snapshot: MaintenanceSnapshot, options: MaintenanceOptions): Detection<'maintenance'>[] {
  const findings: Detection<'maintenance'>[] = [];
  for (const app of snapshot.apps) {
    if (!inMaintenance(app)) continue;
    const { name } = appContext(app);
    const max = formatDuration(options.maxDurationMs);
    findings.push({
      ...appFinding('maintenance', app, WARNING_EVERYWHERE),
      summary: `${name} has been in maintenance for more than ${max}`,
      details: { app: name, state: app.state, max_duration: max },
      // The source does not say when maintenance began; the lifecycle's first sighting stands in.
      since: null,
      holdForMs: options.maxDurationMs,
    });
  }
  return findings;
}
