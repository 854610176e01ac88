import type { AppLabels } from '../collectors/views.js';
import type { LabelValue } from './build-labels.js';

/** What the detectors of app records (backups, maintenance, app_state) say about an app. */
export interface AppContext {
  /** "shop-prod (production)": the app's name and environment, for summaries and details. */
  name: string;
  /** Label values (unknown ones null; `buildLabels` leaves them out). */
  labels: Record<string, LabelValue>;
}

/** Names an app for people and labels: the same words in every finding about it, whichever check. */
export function appContext(app: Omit<AppLabels, 'id' | 'url'>): AppContext {
  return {
    name: `${app.name}${app.environment_type ? ` (${app.environment_type})` : ''}`,
    labels: {
      namespace: app.namespace,
      project: app.project,
      environment_type: app.environment_type,
      app: app.name,
      server: app.server,
    },
  };
}
