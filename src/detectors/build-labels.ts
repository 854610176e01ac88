import type { Labels } from '../lib/alert-vocabulary.js';

/** A label value as a detector has it: unknown values may be null or undefined. */
export type LabelValue = string | number | null | undefined;

/**
 * Builds a finding's labels: `check` plus every given value that is known. Null, undefined and
 * empty values are left out rather than written as "null", so a route or silence that matches on a
 * label never matches a placeholder. Numbers become strings (labels are strings).
 */
export function buildLabels<C extends string>(check: C, values: Record<string, LabelValue>): Labels<C> {
  return { check, ...knownValues({ ...values, check: null }) };
}

/**
 * The known ones of `values`, as text: null, undefined and empty values left out, numbers as
 * strings. A finding's labels (`buildLabels`), and the details a record gives only sometimes.
 */
export function knownValues(values: Record<string, LabelValue>): Record<string, string> {
  const known: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    const text = value === null || value === undefined ? '' : String(value);
    if (text !== '') known[key] = text;
  }
  return known;
}
