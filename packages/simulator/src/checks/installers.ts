/** The installers check's staging: a marketplace service (installer) in a bad state. */
import type { Installer } from '../../../../src/api/schemas.js';
import type { StageContext } from './stage-context.js';

/** Staging operations of the installers check (`control.checks.installers`). */
export function installersStaging(sim: StageContext) {
  return {
    /** Sets an installer's state (e.g. error, stopped), in the simulator's own words. */
    setState(installerId: number, state: string): Installer {
      sim.now();
      const installer = sim.core.state.installers.get(installerId);
      if (!installer) throw new Error(`installers.setState: installer ${installerId} not found`);
      installer.state = state;
      return sim.core.views.installer(installer);
    },
  };
}
