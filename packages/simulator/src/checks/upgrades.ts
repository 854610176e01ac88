/** The upgrades check's staging: an app's open version upgrade in a given state. */
import type { App } from '../../../../src/api/schemas.js';
import { upgradeRec } from '../sim-state.js';
import type { StageContext } from './stage-context.js';

/** Staging operations of the upgrades check (`control.checks.upgrades`). */
export function upgradesStaging(sim: StageContext) {
  return {
    /**
     * Gives an app an open version upgrade in `state` (e.g. testing, standby, failed), from its
     * version to the next major one, or takes it away (`null`). An open upgrade keeps its id and
     * versions when only its state changes.
     */
    set: (appId: number, state: string | null, options: { purpose?: 'test' | 'production' } = {}): App =>
      sim.changeApp(appId, (app) => {
        if (state === null) app.upgrade = null;
        else if (app.upgrade) Object.assign(app.upgrade, { state, purpose: options.purpose ?? app.upgrade.purpose });
        else app.upgrade = upgradeRec(sim.core.state, app, state, options.purpose ?? 'test');
      }),
  };
}
