/**
 * A vanished record is closed in words that say so: before a cycle commits, the alerts it is about
 * to resolve because their check no longer finds the record ("the app is gone from the service")
 * are asked why (`vanished-records.ts`: deleted, disabled, its project disabled), and resolve saying
 * it. The disappearance of a production app is itself told, once (a notice to every channel).
 */
import type { AlertRow, AlertStore } from '../alerts/alert-store.js';
import { covers } from '../alerts/lifecycle.js';
import { HELD_DETAIL, HELD_REASON_DETAIL, type HeldNote, type HeldSubjects } from '../alerts/held-subjects.js';
import { subjectKey } from '../lib/alert-vocabulary.js';
import {
  appKey,
  findVanishedApps,
  isGoneResolution,
  isUnseenNote,
  MAX_LOOKUPS,
  type AppOfAlert,
  type VanishedApp,
} from '../collectors/vanished-records.js';
import type { ApiClient } from '../api/client.js';
import type { Config } from '../config/load-config.js';
import type { DetectorResult } from '../detectors/detector-result.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { Logger } from '../lib/logger.js';
import type { Notifier } from '../notify/notifier.js';

/**
 * What of a cycle's dependencies (`CycleDeps` in `job-cycle.ts`, which hands them in) the
 * vanished apps are asked and told with.
 */
export interface VanishedDeps {
  config: Pick<Config, 'checks'>;
  client: ApiClient;
  alerts: Pick<AlertStore, 'openByJob'>;
  notifier: Pick<Notifier, 'notice'>;
  /** The production apps already told vanished under this configuration (`namespace/name`). */
  vanishedTold: Set<string>;
}

/**
 * The cycle's explainer, with the words of vanished apps; the alerts held instead (their app hidden
 * from the token, or not looked up yet); and what to tell once the cycle is in.
 */
export interface VanishedResolutions {
  explain: (alert: AlertRow) => string | null;
  held: HeldSubjects;
  /** Tells each production app found vanished, once per app and configuration; after the commit. */
  tell(now: number): void;
}

/** Asks why the apps of the alerts this cycle resolves as gone vanished; never throws but for an abort. */
export async function explainVanished(
  deps: VanishedDeps,
  job: string,
  result: DetectorResult,
  explain: (alert: AlertRow) => string | null,
  log: Logger,
  signal?: AbortSignal,
): Promise<VanishedResolutions> {
  const present = new Set(result.findings.map((f) => f.fingerprint));
  const folded = new Set((result.folded ?? []).map((f) => f.fingerprint));
  const apps = new Map<string, AppOfAlert>();
  const gone: AlertRow[] = [];
  const stillFound = (fingerprint: string) => present.has(fingerprint) || folded.has(fingerprint);
  for (const alert of deps.alerts.openByJob(job, stillFound).values()) {
    if (alert.status !== 'firing') continue;
    if (result.incomplete.some((part) => covers(part, alert.fingerprint))) continue;
    const name = alert.labels.app;
    if (!name || !alert.subject || !isGoneResolution(explain(alert))) continue;
    gone.push(alert);
    const key = appKey(alert.labels.namespace, name);
    getOrAdd(apps, key, () => ({
      name,
      namespace: alert.labels.namespace,
      project: alert.labels.project,
      id: alert.subject?.type === 'app' ? alert.subject.id : undefined,
    }));
  }
  if (apps.size === 0) return { explain, held: new Map(), tell: () => undefined };
  // Apps already found hidden from the token are looked up last: the others first, a cap at a time.
  const unseenBefore = new Set(gone.filter(heldUnseen).map(keyOf));
  const order = [...apps].sort(([a], [b]) => Number(unseenBefore.has(a)) - Number(unseenBefore.has(b)));
  const words = deps.config.checks.app_state;
  const live = new Set([...words.bad_states, ...words.other_states]);
  const found = await findVanishedApps(
    deps.client,
    order.map(([, app]) => app),
    live,
    signal,
  );
  const lookedUp = new Set(order.slice(0, MAX_LOOKUPS).map(([key]) => key));
  const vanished = new Map<string, VanishedApp>();
  for (const [key, app] of found) if ('words' in app) vanished.set(key, app);
  if (vanished.size > 0) log.info({ apps: [...vanished.keys()] }, 'apps of resolving alerts vanished from the service');
  // Not "the problem is over": an app the token no longer sees, or one not looked up yet.
  const held = new Map<string, HeldNote>();
  for (const alert of gone) {
    const key = keyOf(alert);
    const app = found.get(key);
    const note: HeldNote | undefined =
      app && 'unseen' in app
        ? { note: app.unseen, reason: 'unseen' }
        : lookedUp.has(key)
          ? undefined
          : unseenBefore.has(key)
            ? { note: alert.details[HELD_DETAIL]!, reason: 'unseen' }
            : `gone from the read; why is looked up at ${MAX_LOOKUPS} apps a cycle; held, not resolved`;
    if (note !== undefined) held.set(subjectKey(alert.subject!), note);
  }
  if (held.size > 0)
    log.info({ alerts: held.size }, 'alerts of apps the token does not see, or not looked up yet, held');
  return {
    explain: (alert) => {
      const base = explain(alert);
      const app = alert.labels.app ? vanished.get(keyOf(alert)) : undefined;
      return app && isGoneResolution(base) ? app.words : base;
    },
    held,
    tell: (now) => {
      for (const [key, app] of vanished) {
        if (app.environment_type !== 'production' || deps.vanishedTold.has(key)) continue;
        deps.vanishedTold.add(key);
        tellProduction(deps, app, now, log);
      }
    },
  };
}

/**
 * Whether an alert is held because its app is hidden from the token: its held reason says so, or,
 * held by a version that wrote the note alone, its note does ({@link isUnseenNote}).
 */
function heldUnseen(alert: AlertRow): boolean {
  const reason = alert.details[HELD_REASON_DETAIL];
  return reason !== undefined ? reason === 'unseen' : isUnseenNote(alert.details[HELD_DETAIL]);
}

/** The key of an alert's app in {@link findVanishedApps}'s answer. */
function keyOf(alert: AlertRow): string {
  return appKey(alert.labels.namespace, alert.labels.app ?? '');
}

/** One notice to every channel: a production app left the service. */
function tellProduction(deps: VanishedDeps, app: VanishedApp, now: number, log: Logger): void {
  const gone = app.disabledProject !== null ? `disabled with project ${app.disabledProject}` : app.state;
  try {
    deps.notifier.notice(
      {
        type: 'notice',
        topic: 'vanished',
        title: `Production app ${app.name} ${gone}`,
        severity: 'warning',
        fields: [
          { label: 'App', value: app.name },
          { label: 'Namespace', value: app.namespace },
        ],
        lines: [
          `${app.words}. Its alerts are resolved as such: nothing of it is watched any more. If it should not have gone, this is the moment to ask why.`,
        ],
      },
      undefined,
      now,
    );
  } catch (err) {
    log.warn({ err, app: app.name }, 'cannot tell that a production app vanished');
  }
}
