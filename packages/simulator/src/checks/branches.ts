/** The branches check's staging: a repository's branch deleted upstream, or ahead of what is deployed. */
import type { App } from '../../../../src/api/schemas.js';
import { Prng } from '../prng.js';
import type { StageContext } from './stage-context.js';

/** Changes of `checks.branches.setRepository`. */
export interface RepositoryPatch {
  /** The repository's name; default the app's main repository. */
  repository?: string;
  deletedUpstream?: boolean;
  behind?: boolean;
}

/** Staging operations of the branches check (`control.checks.branches`). */
export function branchesStaging(sim: StageContext) {
  return {
    /**
     * Changes one repository of an app (by name; default its main one): `deletedUpstream` marks its
     * branch deleted upstream (the next update cannot pull), `behind` true pushes a new commit to the
     * branch so the deployed one is behind, false deploys the branch head.
     */
    setRepository(appId: number, patch: RepositoryPatch): App {
      const now = sim.now();
      const app = sim.app(appId);
      const repo = sim.repository(app, patch.repository);
      if (patch.deletedUpstream !== undefined) repo.deletedUpstream = patch.deletedUpstream;
      if (patch.behind === true) repo.headSha = new Prng(sim.core.seed * 1000 + appId + now).hex(40);
      if (patch.behind === false) repo.deployedSha = repo.headSha;
      repo.checkedAt = now;
      return sim.core.views.app(app, now);
    },
  };
}
