import type { Subject } from '../lib/alert-vocabulary.js';
import { buildLabels, type LabelValue } from './build-labels.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';

/** What every finding about one record says of the record, whichever check found it: all of it given. */
export type RecordFindingParts<C extends string> = Required<
  Pick<Detection<C>, 'fingerprint' | 'check' | 'labels' | 'url' | 'subject'>
>;

/**
 * The parts of a finding about one record (a run, a URL, a server, a marketplace service) that
 * every check of such records fills the same way: fingerprinted by the check, the record's type
 * and id and its sub-problem if it has one (`unchecked`), labelled by the check with `labels`,
 * linked to `url`, and the record as the subject. The check adds the rest: severity, summary,
 * details and since.
 */
export function recordFinding<C extends string>(
  check: C,
  subject: Required<Subject>,
  labels: Record<string, LabelValue>,
  url: string | null,
  ...problem: string[]
): RecordFindingParts<C> {
  return {
    fingerprint: fingerprint(check, subject.type, subject.id, ...problem),
    check,
    labels: buildLabels(check, labels),
    url,
    subject,
  };
}
