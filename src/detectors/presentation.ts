/**
 * How a check's findings are shown to a reader: the noun of its headline, and per finding the facts
 * under the summary and the one-line form of compact messages. Each check says it beside its
 * detector; the facts travel on the finding (and its alert and events), so renderers show them
 * without knowing any check.
 */
import type { Fact } from '../lib/alert-vocabulary.js';
import type { Detection, Finding } from './finding.js';
import { keyInWords } from './key-in-words.js';

/** What a presentation reads of a finding. */
export type Presentable = Pick<Detection<string>, 'summary' | 'details' | 'labels'>;

/** How one check's findings are shown. */
export interface Presentation {
  /** Singular and plural noun, for "1 failed run", "3 failed runs". */
  noun: readonly [singular: string, plural: string];
  /** The facts that matter to a reader, in order; the rest of the details repeat the summary or the labels. */
  facts(finding: Presentable): Fact[];
  /** The one-line form for compact messages; null (or absent): the summary says it best. */
  brief?(details: Readonly<Record<string, string>>): string | null;
  /**
   * What the reader of a firing alert does next, in one sentence of our own words (no API text):
   * "Read the failed step's log, fix the cause, then retry the run." Asked when a message is
   * rendered, never stored. Null (or absent): nothing to say beyond the silence command.
   */
  nextStep?(finding: Presentable): string | null;
}

/**
 * A detail a check shows: its key, the label a reader sees, and whether the value is a time. A bare
 * key is shown under the key in words (`newest_backup`: "Newest backup"): the label is written
 * out only where it says more or other than the key.
 */
export type FactSpec = string | readonly [key: string, label: string, kind?: 'time'];

/** Facts picked from a finding's details by `spec`, in its order; absent and empty values left out. */
export function factsFrom(spec: readonly FactSpec[]): (finding: Presentable) => Fact[] {
  const facts = spec.map((s) => (typeof s === 'string' ? ([s, keyInWords(s)] as const) : s));
  return ({ details }) =>
    facts.flatMap(([key, label, kind]): Fact[] => {
      const value = details[key];
      if (value === undefined || value === '') return [];
      return [kind ? { label, value, kind } : { label, value }];
    });
}

/** A detection with what `presentation` shows of it. */
export function present<C extends string>(presentation: Presentation, detection: Detection<C>): Finding<C> {
  const facts = presentation.facts(detection);
  const brief = presentation.brief?.(detection.details) ?? null;
  return brief === null ? { ...detection, facts } : { ...detection, facts, brief };
}
