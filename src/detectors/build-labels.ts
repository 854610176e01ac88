import type { Labels } from '../lib/alert-vocabulary.js';

/** A label value as a detector has it: unknown values may be null or undefined. */
export type LabelValue = string | number | null | undefined;

/**
 * Builds a finding's labels: `check` plus every given value that is known. Null, undefined and
 * empty values are left out rather than written as "null", so a route or silence that matches on a
 * label never matches a placeholder. Numbers become strings (labels are strings).
 */
export function buildLabels<C extends string>(check: C, values: Record<string, LabelValue>): Labels<C> {
  const labels: Labels<C> = { check };
  for (const [key, value] of Object.entries(values)) {
    if (key === 'check' || value === null || value === undefined) continue;
    const text = String(value);
    if (text !== '') labels[key] = text;
  }
  return labels;
}
