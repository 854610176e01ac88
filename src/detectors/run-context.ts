import type { EnvironmentType, Run, RunListItem } from '../api/schemas.js';
import type { AppLabels } from '../collectors/views.js';

/**
 * Names a run for people: app, environment and action, looked up in the snapshot's apps (what the
 * run detectors say about the record a run belongs to). The run's own fields win over the app's
 * (they describe the run as it was); the app adds server and URL.
 */
export function runContext(run: RunListItem | Run, apps: ReadonlyMap<number, AppLabels>) {
  const app = run.app_id === null ? undefined : apps.get(run.app_id);
  const environmentType: EnvironmentType | null = run.environment_type ?? app?.environment_type ?? null;
  const action = run.action.replace(/_/g, ' ');
  return {
    /** "Update", "Update modules": the run's action as the start of a sentence. */
    title: action.charAt(0).toUpperCase() + action.slice(1),
    /** The app's name, else the run's record ("web-01"), else "run #123". */
    name: app?.name ?? run.record ?? `run #${run.id}`,
    /** " (production)" or "" when the run is outside any environment. */
    environmentSuffix: environmentType ? ` (${environmentType})` : '',
    /** The run's environment type, else its app's; null outside any environment. */
    environmentType,
    /** Label values (unknown ones null or undefined; `buildLabels` leaves them out). */
    labels: {
      namespace: run.namespace,
      project: run.project ?? app?.project,
      environment_type: environmentType,
      app: app?.name ?? (run.app_id !== null ? run.record : null),
      server: app?.server,
      // A run on something other than an app (a server patch): keep what it ran on.
      record: run.app_id === null ? run.record : null,
      record_type: run.app_id === null ? run.record_type : null,
      workflow: run.workflow,
      action: run.action,
    },
    /** The app's URL where known. */
    url: app?.url ?? null,
  };
}

/** The details every finding about a run starts with: which run, of what, in what state. */
export function runDetails(run: RunListItem): Record<string, string> {
  return { run: `#${run.id}`, workflow: run.workflow, action: run.action, state: run.state };
}

/**
 * A run whose alert the API can say more about after the cycle (`src/context/`): the log of its
 * workflow around the time it failed, and, for an update or upgrade, its restore point. What an
 * alert about a run carries is enough to ask: no read of the run again.
 */
export interface RunContextAsk {
  runId: number;
  appId: number;
  workflow: string;
  action: string;
  /** When it failed (ISO 8601), where known: the log is read from a little before. */
  at: string | null;
}

/**
 * The context ask of an alert about an app's run, from its subject and details (`app_id`,
 * `workflow`, `action`, `failed_at` or `since`, as the run detectors write them); null for a run of no app (a
 * server patch: no app log to read) or an alert that does not say.
 */
export function runContextAsk(alert: {
  subject: { type: string; id?: number } | null;
  details: Readonly<Record<string, string>>;
}): RunContextAsk | null {
  const { subject, details } = alert;
  if (subject?.type !== 'run' || subject.id === undefined) return null;
  const appId = Number(details.app_id);
  if (!Number.isSafeInteger(appId) || details.workflow === undefined || details.action === undefined) return null;
  // A run retried and failed again: its latest failure (`failed_at`, run-lineage.ts), not its first.
  const at = details.failed_at ?? details.since ?? null;
  return { runId: subject.id, appId, workflow: details.workflow, action: details.action, at };
}
