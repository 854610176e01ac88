/** The attention check's staging: an item of the service's dashboard that no other check of ours covers. */
import type { App } from '../../../../src/api/schemas.js';
import type { StageContext } from './stage-context.js';

/** Staging operations of the attention check (`control.checks.attention`). */
export function attentionStaging(sim: StageContext) {
  return {
    /** The app stops answering (its item in the dashboard's "Apps not answering"), or answers again. */
    setAnswering: (appId: number, answering: boolean): App =>
      sim.changeApp(appId, (app) => {
        if (answering) delete app.notAnswering;
        else app.notAnswering = true;
      }),
  };
}
