import type { EnvironmentType, UrlRecord } from '../api/schemas.js';
import type { AppLabels } from '../collectors/views.js';

/** What the URL detectors say about the app a URL record belongs to. */
export type UrlContext = ReturnType<typeof urlContext>;

/** Host of a URL for labels: `https://shop.example.com/x` → `shop.example.com`; raw text otherwise. */
function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host || url : url;
}

/** Labels, name and link of a URL record, with server and app URL from the snapshot's apps. */
export function urlContext(record: UrlRecord, apps: ReadonlyMap<number, AppLabels>) {
  const app = apps.get(record.app_id);
  const environmentType: EnvironmentType | null = record.environment_type ?? app?.environment_type ?? null;
  return {
    /** "shop-prod (production)": the app's name and environment, for summaries. */
    appName: `${record.app}${environmentType ? ` (${environmentType})` : ''}`,
    /** The record's environment type, else its app's; null outside any environment. */
    environmentType,
    /** Label values (unknown ones undefined; `buildLabels` leaves them out). */
    labels: {
      namespace: record.namespace,
      project: record.project ?? app?.project,
      environment_type: environmentType,
      app: record.app,
      server: app?.server,
      host: hostOf(record.url),
    },
    /** The app's URL where known, else the record's own. */
    url: app?.url ?? record.url,
  };
}
