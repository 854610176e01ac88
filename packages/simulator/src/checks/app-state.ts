/** The app_state check's staging: an app in a bad state. */
import type { App } from '../../../../src/api/schemas.js';
import type { StageContext } from './stage-context.js';

/** Staging operations of the app_state check (`control.checks.app_state`). */
export function appStateStaging(sim: StageContext) {
  return {
    /** Sets an app's state (e.g. error, stopped), in the simulator's own words. */
    set: (appId: number, state: string): App =>
      sim.changeApp(appId, (app) => {
        app.state = state;
      }),
  };
}
