/**
 * Bounds on a record whose fields the reference does not give (an attention item: "not shown"),
 * kept as an open record. Anything may come in one; a 3,000-deep object failed the attention job
 * every cycle ("Maximum call stack size exceeded" in the content hash) and a 126,000-field item
 * made its alert undeliverable. So an open record is measured once at the edge, without recursion,
 * and one past {@link OPEN_RECORD_LIMITS} keeps only its first top-level text, number and boolean
 * fields, with `shape_cut` saying what was cut: the item is still told, readable and bounded.
 * A top-level text field longer than `EDGE_TEXT_MAX` is cut too (`cut-at-edge.ts`).
 */
import { cutAtEdge, EDGE_TEXT_MAX } from './cut-at-edge.js';

/** How deep and how wide an open record may be before it is cut. */
export const OPEN_RECORD_LIMITS = {
  /** Levels of nested objects and arrays below the record itself. */
  depth: 32,
  /** Fields and array elements, at every level together. */
  fields: 1_000,
} as const;

/** The field an open record cut to its limits gains, saying why. */
export const SHAPE_CUT_FIELD = 'shape_cut';

/** `record` itself when within the limits; else its first top-level plain fields and a `shape_cut` note. */
export function boundOpenRecord(record: Record<string, unknown>): Record<string, unknown> {
  const problem = shapeProblem(record);
  if (problem === undefined) return cutLongFields(record);
  const kept: Record<string, unknown> = {};
  let count = 0;
  for (const key in record) {
    if (count >= OPEN_RECORD_LIMITS.fields) break;
    const value = record[key];
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
      kept[key] = typeof value === 'string' ? cutAtEdge(value) : value;
      count++;
    }
  }
  kept[SHAPE_CUT_FIELD] = problem;
  return kept;
}

/** What is beyond the limits, or undefined; stops at the first excess, so it costs at most the limits. */
function shapeProblem(record: Record<string, unknown>): string | undefined {
  const stack: [unknown, number][] = [[record, 0]];
  let fields = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > OPEN_RECORD_LIMITS.depth)
      return `nested deeper than ${OPEN_RECORD_LIMITS.depth} levels; only its top-level fields are kept`;
    for (const key in value) {
      if (++fields > OPEN_RECORD_LIMITS.fields)
        return `more than ${OPEN_RECORD_LIMITS.fields} fields; only its first top-level fields are kept`;
      stack.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return undefined;
}

/** The record with each top-level text longer than {@link EDGE_TEXT_MAX} cut; itself when none is. */
function cutLongFields(record: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in record) {
    const value = record[key];
    if (typeof value === 'string' && value.length > EDGE_TEXT_MAX) (out ??= { ...record })[key] = cutAtEdge(value);
  }
  return out ?? record;
}
