/**
 * Who plays which part in the demo: the apps, URLs and backups the scenario stages its problems
 * on, chosen from the seeded estate. Production apps carry the problems that page people (they go
 * to Slack and email); the failing run goes to a staging app, where the retry policy may act.
 */
import type { EnvironmentType } from '../../../../src/api/schemas.js';
import type { SimulatorControl } from '../simulator-control.js';
import { PLANS_WITH_LOGS, VOCABULARY } from '../vocabulary.js';

/** An app as the demo names it. */
export interface CastApp {
  id: number;
  name: string;
  environmentType: EnvironmentType;
}

/** A URL of an app. */
export interface CastUrl {
  id: number;
  url: string;
  app: CastApp;
}

/** The records each staged problem happens to. */
export interface DemoCast {
  /**
   * Its update fails, and the retry policy retries it (staging when there is one, in a project
   * whose plan has logs, so its alert shows the lines of the failure).
   */
  runApp: CastApp;
  /** Its certificate nears expiry. */
  certificate: CastUrl;
  /** Its backups go stale. */
  staleApp: CastApp;
  /** Its newest backup's off-site upload fails. */
  offsiteApp: CastApp;
  /** Its outside check fails, which puts it in a red section of the attention summary. */
  publicCheck: CastUrl;
}

/** Environment preference of the failing run: where an automatic retry is a safe first move. */
const RUN_PREFERENCE: EnvironmentType[] = ['staging', 'development', 'production'];

/**
 * Picks the cast from the estate: distinct running production apps for the four production
 * problems while there are enough (otherwise they share), and a staging app for the run. Throws
 * when the estate has no running app with a URL, which no seed of one app or more produces.
 */
export function castDemo(control: SimulatorControl): DemoCast {
  const state = control.state;
  const live = [...state.apps.values()]
    .filter((a) => a.state === VOCABULARY.app.running && a.deployedAt !== null && a.envType !== null)
    .map((a) => ({
      app: { id: a.id, name: a.name, environmentType: a.envType as EnvironmentType },
      urls: a.urlIds.flatMap((id) => {
        const u = state.urls.get(id);
        // An active URL the outside check looks at: its certificate and check can both be staged.
        return u && u.state === VOCABULARY.url.active && u.publicCheck !== null ? [{ id: u.id, url: u.url }] : [];
      }),
      hasBackup: state.backupIndex.byApp(a.id).length > 0,
      hasLogs: PLANS_WITH_LOGS.includes(state.projectOf(a).plan),
    }));
  const withUrl = live.filter((a) => a.urls.length > 0);
  if (withUrl.length === 0)
    throw new Error('the seeded estate has no running app with an active URL; try another --seed or more --apps');

  const production = withUrl.filter((a) => a.app.environmentType === 'production');
  const pool = production.length > 0 ? production : withUrl;
  // Round-robin over the pool: distinct apps while there are enough, shared otherwise.
  const nth = (i: number) => pool[i % pool.length] as (typeof pool)[number];
  const backedUp = pool.filter((a) => a.hasBackup);
  const nthBackedUp = (i: number) =>
    backedUp.length > 0 ? (backedUp[i % backedUp.length] as (typeof pool)[number]) : nth(i);

  const certificateApp = nth(0);
  const publicApp = nth(3);
  // With logs where there are any: the failed run's alert then shows the lines of its failure.
  const logged = live.filter((a) => a.hasLogs);
  const runApp =
    [logged, live]
      .flatMap((apps) => RUN_PREFERENCE.map((env) => apps.find((a) => a.app.environmentType === env)))
      .find((a) => a !== undefined) ?? certificateApp;
  const urlOf = (entry: (typeof pool)[number], index: number): CastUrl => {
    const url = entry.urls[index % entry.urls.length] as { id: number; url: string };
    return { ...url, app: entry.app };
  };
  return {
    runApp: runApp.app,
    certificate: urlOf(certificateApp, 0),
    staleApp: nthBackedUp(1).app,
    offsiteApp: nthBackedUp(2).app,
    // A different URL than the certificate's when both land on one app.
    publicCheck: urlOf(publicApp, publicApp === certificateApp ? 1 : 0),
  };
}
