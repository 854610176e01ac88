import type { AppLabels } from '../collectors/views.js';

/**
 * Names an app for people and labels: the same words in every finding about it, whichever check
 * (backups, maintenance, app_state…).
 */
export function appContext(app: Omit<AppLabels, 'id' | 'url'>) {
  return {
    /** "shop-prod (production)": the app's name and environment, for summaries and details. */
    name: `${app.name}${app.environment_type ? ` (${app.environment_type})` : ''}`,
    /** Label values (unknown ones null; `buildLabels` leaves them out). */
    labels: {
      namespace: app.namespace,
      project: app.project,
      environment_type: app.environment_type,
      app: app.name,
      server: app.server,
    },
  };
}
