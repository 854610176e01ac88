/** The repository_checks check's staging: the platform stops reading an app's repository, or reads it again. */
import type { App } from '../../../../src/api/schemas.js';
import { HOUR, type StageContext } from './stage-context.js';

/** Which repository of an app (default its main one). */
interface Which {
  repository?: string;
}

/** Staging operations of the repository_checks check (`control.checks.repository_checks`). */
export function repositoryChecksStaging(sim: StageContext) {
  return {
    /**
     * The platform stopped reading a repository of the app `hoursAgo` (a revoked deploy key, a
     * repository moved or made private): its `checked_at` stays there; `hoursAgo` null: never read.
     */
    stop: (appId: number, options: Which & { hoursAgo: number | null }): App =>
      sim.changeApp(appId, (app, now) => {
        const repo = sim.repository(app, options.repository);
        repo.checkedAt = options.hoursAgo === null ? null : now - options.hoursAgo * HOUR;
        repo.readStopped = true;
      }),
    /** The platform reads the repository again: now, and every period from now on. */
    resume: (appId: number, options: Which = {}): App =>
      sim.changeApp(appId, (app, now) => {
        const repo = sim.repository(app, options.repository);
        repo.checkedAt = now;
        repo.readStopped = false;
      }),
  };
}
