/**
 * Why the app of an alert about to resolve vanished from the service: deleted, disabled, or gone
 * with its disabled project. A check that no longer finds its record says only "the app is gone
 * from the service" (`record-resolution.ts`); that is not "the problem is over", so before such an
 * alert resolves, the app is looked up with `apps.list?include_deleted=true` (by name, in its
 * namespace) and its project with `projects.list?include_deleted=true`, and the alert resolves in
 * words that say so ("app deleted", "project disabled").
 *
 * An app not listed even with `include_deleted`, or in a namespace the token no longer reaches, has
 * not vanished from the service: it is hidden from this token (its role or namespaces changed), so
 * the problem may well go on. Its alerts are held, never resolved, and say so ({@link UnseenApp}).
 *
 * Read only for the apps of open alerts that vanished (at most {@link MAX_LOOKUPS} a cycle), never
 * fatal: a lookup that fails leaves the check's own words.
 */
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import type { AppListItem } from '../api/schemas.js';
import { unlessAborted } from '../lib/unless-aborted.js';

/** Apps looked up per cycle at most: the alerts of the others are held, and looked up in the next cycles. */
export const MAX_LOOKUPS = 10;

/** A check's words for a record its snapshot no longer has (`recordResolution`'s `gone`). */
const GONE = /\bis gone from the (service|platform)$/;

/** Whether a resolution says only that the record is gone (so why is worth asking). */
export function isGoneResolution(text: string | null): boolean {
  return text !== null && GONE.test(text);
}

/** The app an alert is about, as its labels and subject name it. */
export interface AppOfAlert {
  name: string;
  namespace: string | undefined;
  project: string | undefined;
  /** Its id, when the alert's subject is the app. */
  id: number | undefined;
}

/**
 * Why an app vanished, as found: the app as `apps.list` lists it with `include_deleted` (its own
 * `state` word, `deleted` or `disabled`, is the service's), and why.
 */
export interface VanishedApp extends AppListItem {
  /** The name of its project when that project is disabled. */
  disabledProject: string | null;
  /** The resolution of its alerts: "app deleted: …", "project disabled: …". */
  words: string;
}

/** An app this token no longer sees at all: why its alerts are held, in the note they carry. */
export interface UnseenApp {
  unseen: string;
}

/**
 * The note words of an {@link UnseenApp} as versions before the held reason (`held_reason`) wrote
 * them, the note alone. Only {@link isUnseenNote} reads them, for alerts those versions held.
 */
const UNSEEN = /^(app .* is not listed to this token|the token no longer reaches namespace )/;

/**
 * Whether a held note without a reason says its app is hidden from the token: how an alert held by
 * a version before the held reason is recognised. Each cycle that holds it again writes the reason
 * (`vanished-resolutions.ts`), so this can go, with {@link UNSEEN}, once no upgrade skips the
 * version that first wrote it. Never ask it of a note that has a reason.
 */
export function isUnseenNote(note: string | undefined): boolean {
  return note !== undefined && UNSEEN.test(note);
}

/**
 * Looks the apps up, in order; answers, by app name and namespace (`ns/name`), those found
 * vanished (listed only with `include_deleted`, in a state none of `liveStates` names, or in a
 * disabled project) and those the token does not see at all ({@link UnseenApp}).
 */
export async function findVanishedApps(
  client: ApiClient,
  apps: readonly AppOfAlert[],
  liveStates: ReadonlySet<string>,
  signal?: AbortSignal,
): Promise<Map<string, VanishedApp | UnseenApp>> {
  const out = new Map<string, VanishedApp | UnseenApp>();
  for (const app of apps.slice(0, MAX_LOOKUPS)) {
    const found = await unlessAborted(lookUp(client, app, liveStates, signal), signal, (err) => unseenBy(app, err));
    if (found) out.set(appKey(app.namespace, app.name), found);
  }
  return out;
}

/** A namespace the token no longer reaches (`namespace_not_found`) hides the app; other failures say nothing. */
function unseenBy(app: AppOfAlert, err: unknown): UnseenApp | undefined {
  if (!(err instanceof ApiError) || err.code !== 'namespace_not_found') return undefined;
  return {
    unseen: `the token no longer reaches namespace ${app.namespace} (namespace_not_found), where app ${app.name} is; held, not resolved`,
  };
}

/** The key of an app in {@link findVanishedApps}'s answer. */
export function appKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

async function lookUp(
  client: ApiClient,
  app: AppOfAlert,
  liveStates: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<VanishedApp | UnseenApp | undefined> {
  const scope = app.namespace === undefined ? {} : { namespace: app.namespace };
  const page = await client.apps.list({ ...scope, search: app.name, include_deleted: true, limit: 50 }, { signal });
  const record = page.items.find((a) => (app.id === undefined || a.id === app.id) && a.name === app.name);
  // Deleted and disabled apps are listed with include_deleted (reference §4): not even there, it is
  // hidden from this token, not gone from the service (unless the search matched more than a page).
  if (!record)
    return page.total > page.items.length
      ? undefined
      : {
          unseen: `app ${app.name} is not listed to this token, not even with include_deleted: its role may no longer see it; held, not resolved`,
        };
  const projects = await client.projects.list(
    { ...scope, search: record.project, include_deleted: true, limit: 50 },
    { signal },
  );
  const project = projects.items.find((p) => p.name === record.project || p.code === record.project);
  const disabledProject = project?.disabled ? project.name : null;
  if (disabledProject === null && liveStates.has(record.state)) return undefined;
  const words =
    disabledProject !== null
      ? `project disabled: ${disabledProject} is disabled on the service, and its app ${record.name} with it`
      : `app ${record.state}: the service lists ${record.name} as ${record.state}`;
  return { ...record, disabledProject, words };
}
