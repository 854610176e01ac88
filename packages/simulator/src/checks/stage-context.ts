/**
 * What a check's staging operations (`checks/<check>.ts`) and the generic control reach of a
 * running simulator: its core, the simulated time, and its records by id (a missing one is an
 * error naming it, so a test's wrong id says so at once).
 */
import type { App } from '../../../../src/api/schemas.js';
import type { AppRec, BackupRec, RepositoryRec, UrlRec } from '../sim-state.js';
import type { SimulatorCore } from '../simulator-core.js';

/** One hour in ms: the unit most staging options are given in. */
export const HOUR = 3_600_000;
/** One day in ms. */
export const DAY = 24 * HOUR;

/** The simulator as staging operations see it. */
export class StageContext {
  constructor(readonly core: SimulatorCore) {}

  /** Brings runs up to the current simulated time and answers it: every operation's first step. */
  now(): number {
    return this.core.tick();
  }

  /** The app `id`; throws when there is none. */
  app(id: number): AppRec {
    const app = this.core.state.apps.get(id);
    if (!app) throw new Error(`app ${id} not found`);
    return app;
  }

  /** Changes the app `appId` now; answers it as `apps.get` shows it then. */
  changeApp(appId: number, change: (app: AppRec, now: number) => void): App {
    const now = this.now();
    const app = this.app(appId);
    change(app, now);
    return this.core.views.app(app, now);
  }

  /** A repository of an app, by name (default its main one, else its first); throws when there is none. */
  repository(app: AppRec, name?: string): RepositoryRec {
    const repo = name
      ? app.repositories.find((r) => r.repository === name)
      : (app.repositories.find((r) => r.main) ?? app.repositories[0]);
    if (!repo) throw new Error(`app ${app.id} has no repository ${name ?? '(main)'}`);
    return repo;
  }

  /** The URL `id`; throws when there is none. */
  url(id: number): UrlRec {
    const url = this.core.state.urls.get(id);
    if (!url) throw new Error(`url ${id} not found`);
    return url;
  }

  /** The backup `id`; throws when there is none. */
  backup(id: number): BackupRec {
    const backup = this.core.state.backups.get(id);
    if (!backup) throw new Error(`backup ${id} not found`);
    return backup;
  }
}
