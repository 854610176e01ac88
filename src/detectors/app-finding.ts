import type { AppLabels } from '../collectors/views.js';
import type { Severity } from '../lib/alert-vocabulary.js';
import { appContext } from './app-context.js';
import type { LabelValue } from './build-labels.js';
import { recordFinding, type RecordFindingParts } from './record-finding.js';

/**
 * The parts of a finding about `app` that every app check fills the same way: the parts of a
 * finding about a record ({@link recordFinding}: fingerprinted as the app, which a check with more
 * than one finding per app replaces with its own), its labels with the check's own `extra` (a
 * repository, a problem), and its `severity`. The check adds the rest: summary, details and since.
 */
export function appFinding<C extends string>(
  check: C,
  app: AppLabels,
  severity: Severity,
  extra: Record<string, LabelValue> = {},
): RecordFindingParts<C> & { severity: Severity } {
  return {
    ...recordFinding(check, { type: 'app', id: app.id }, { ...appContext(app).labels, ...extra }, app.url),
    severity,
  };
}
