/** The maintenance check's staging: an app left in maintenance. */
import type { App } from '../../../../src/api/schemas.js';
import type { StageContext } from './stage-context.js';

/** Staging operations of the maintenance check (`control.checks.maintenance`). */
export function maintenanceStaging(sim: StageContext) {
  return {
    /** Puts an app in or out of maintenance at once (no run). */
    set: (appId: number, on: boolean): App =>
      sim.changeApp(appId, (app) => {
        app.maintenance = on;
      }),
  };
}
