import type { AppLabels } from '../collectors/views.js';
import type { Labels, Severity, Subject } from '../lib/alert-vocabulary.js';
import { appContext } from './app-context.js';
import { buildLabels, type LabelValue } from './build-labels.js';
import { environmentSeverity, type EnvironmentSeverity } from './environment-severity.js';

/** What every finding about one app says of the app, whichever check found it. */
export interface AppFindingParts<C extends string> {
  check: C;
  severity: Severity;
  labels: Labels<C>;
  url: string | null;
  subject: Subject;
}

/**
 * The parts of a finding about `app` that every app check fills the same way: the severity its
 * environment takes in `severity`, its labels (with the check's own `extra`: a repository, a
 * problem), its link and the app as the subject. The check adds the rest: fingerprint, summary,
 * details and since.
 */
export function appFinding<C extends string>(
  check: C,
  app: AppLabels,
  severity: EnvironmentSeverity,
  extra: Record<string, LabelValue> = {},
): AppFindingParts<C> {
  return {
    check,
    severity: environmentSeverity(app.environment_type, severity),
    labels: buildLabels(check, { ...appContext(app).labels, ...extra }),
    url: app.url,
    subject: { type: 'app', id: app.id },
  };
}
