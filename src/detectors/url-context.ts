import type { EnvironmentType, UrlRecord } from '../api/schemas.js';
import type { AppLabels } from '../collectors/views.js';
import type { LabelValue } from './build-labels.js';

/** What the URL detectors say about the app a URL record belongs to. */
export interface UrlContext {
  /** "shop-prod (production)": the app's name and environment, for summaries. */
  appName: string;
  /** The record's environment type, else its app's; null outside any environment. */
  environmentType: EnvironmentType | null;
  /** Label values (unknown ones null; `buildLabels` leaves them out). */
  labels: Record<string, LabelValue>;
  /** The app's URL where known, else the record's own. */
  url: string;
}

/** Host of a URL for labels: `https://shop.example.com/x` → `shop.example.com`; raw text otherwise. */
function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host || url : url;
}

/** Labels, name and link of a URL record, with server and app URL from the snapshot's apps. */
export function urlContext(record: UrlRecord, apps: ReadonlyMap<number, AppLabels>): UrlContext {
  const app = apps.get(record.app_id);
  const environmentType = record.environment_type ?? app?.environment_type ?? null;
  return {
    appName: `${record.app}${environmentType ? ` (${environmentType})` : ''}`,
    environmentType,
    labels: {
      namespace: record.namespace,
      project: record.project ?? app?.project,
      environment_type: environmentType,
      app: record.app,
      server: app?.server,
      host: hostOf(record.url),
    },
    url: app?.url ?? record.url,
  };
}
