/** The restore_points check's staging: restore points of failed changes, and an app held at one. */
import type { RestorePoint } from '../../../../src/api/schemas.js';
import { addRestorePointRec, type RestorePointRec } from '../sim-state.js';
import { DAY, HOUR, type StageContext } from './stage-context.js';

/** Options of `checks.restore_points.add`. */
export interface AddRestorePointOptions {
  outcome?: RestorePointRec['outcome'];
  held?: boolean;
  action?: 'update' | 'update_modules';
  hoursAgo?: number;
}

/** Staging operations of the restore_points check (`control.checks.restore_points`). */
export function restorePointsStaging(sim: StageContext) {
  return {
    /**
     * Adds a restore point to an app, as a change of `action` (default update) would leave it:
     * `outcome` applied (default), kept (the change failed, the app left as before), failed (the
     * change failed part-way) or running; `held` when the app was rolled back to it (auto-updates wait).
     */
    add(appId: number, options: AddRestorePointOptions = {}): RestorePoint {
      const now = sim.now();
      const outcome = options.outcome ?? 'applied';
      const at = now - (options.hoursAgo ?? 0) * HOUR;
      const point = addRestorePointRec(sim.core.state, sim.app(appId), at, options.action, null);
      Object.assign(point, {
        outcome,
        held: options.held ?? false,
        instantUndo: outcome === 'applied',
        keptUntil: outcome === 'running' ? null : point.at + 7 * DAY,
      });
      return sim.core.views.restorePoint(point);
    },

    /** Holds a restore point (the app was rolled back to it; auto-updates wait) or lets it go. */
    setHeld(pointId: number, held: boolean): RestorePoint {
      sim.now();
      const point = sim.core.state.restorePoints.get(pointId);
      if (!point) throw new Error(`restore_points.setHeld: restore point ${pointId} not found`);
      point.held = held;
      return sim.core.views.restorePoint(point);
    },
  };
}
