/** The undo_copies check's staging: a restore point whose database copy outlives its kept_until. */
import type { RestorePoint } from '../../../../src/api/schemas.js';
import { addRestorePointRec } from '../sim-state.js';
import { DAY, type StageContext } from './stage-context.js';

/** Staging operations of the undo_copies check (`control.checks.undo_copies`). */
export function undoCopiesStaging(sim: StageContext) {
  return {
    /** Adds an applied update's restore point, kept a day, whose database copy is still held `daysPast` (default 2) after. */
    overdue(appId: number, daysPast = 2): RestorePoint {
      const now = sim.now();
      const point = addRestorePointRec(sim.core.state, sim.app(appId), now - (daysPast + 1) * DAY, 'update', null);
      Object.assign(point, { outcome: 'applied', instantUndo: true, keptUntil: now - daysPast * DAY });
      return sim.core.views.restorePoint(point);
    },

    /** Lets a restore point's database copy go (`instant_undo` false). */
    letGo(pointId: number): RestorePoint {
      sim.now();
      const point = sim.core.state.restorePoints.get(pointId);
      if (!point) throw new Error(`undo_copies.letGo: restore point ${pointId} not found`);
      point.instantUndo = false;
      return sim.core.views.restorePoint(point);
    },
  };
}
