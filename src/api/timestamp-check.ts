/**
 * The check every timestamp of an answer must pass, made once per answer schema.
 *
 * The reference says only that timestamps are strings, and the daemon reads ISO 8601 with a zone
 * (`lib/parse-time.ts`). A record whose timestamp cannot be read fails its answer, naming the field
 * and the record's id, so past the client every timestamp a detector reads is one it reads right.
 * Why not a zod refinement on the timestamp schema: measured on a 10,000-app cycle, zod's
 * refinements cost ~150 ms of CPU (about 18% of the watchdog's own); this walks the parsed answer
 * along the paths that hold a timestamp, found once per schema, and costs a few milliseconds.
 */
import type { z } from 'zod';
import { timeProblem } from '../lib/parse-time.js';
import { getOrAdd } from '../lib/get-or-add.js';

/** The first timestamp of a parsed answer that cannot be read: where, and why. */
export interface TimestampProblem {
  /** The path to it, as zod paths go: `['items', 3, 'created_at']`. */
  path: PropertyKey[];
  problem: string;
}

/** Finds the first unreadable timestamp of a parsed answer, or null. */
export type TimestampCheck = (data: unknown) => TimestampProblem | null;

/** A step from a value to what it holds: a field of an object, or every element of an array. */
type Step = { field: string } | { each: true };

const CHECKS = new WeakMap<z.ZodType, TimestampCheck>();

/**
 * The check of answers of `schema`: every field whose schema is `timestamp` (the one instance
 * `schemas.ts` uses for every timestamp field, kept by `pick` and `extend`), wherever it sits.
 */
export function timestampCheckOf(schema: z.ZodType, timestamp: z.ZodType): TimestampCheck {
  return getOrAdd(CHECKS, schema, () => compile(pathsTo(schema, timestamp)));
}

/** Every path from `schema` to a field of schema `timestamp`. */
function pathsTo(schema: z.ZodType, timestamp: z.ZodType, depth = 0): Step[][] {
  if (depth > 8) return [];
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  switch (def.type) {
    case 'nullable':
    case 'optional':
    case 'default':
    case 'prefault':
      return pathsTo(def.innerType as z.ZodType, timestamp, depth);
    case 'array':
      return pathsTo(def.element as z.ZodType, timestamp, depth + 1).map((p) => [{ each: true } as Step, ...p]);
    case 'object': {
      const out: Step[][] = [];
      for (const [field, child] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        if (child === timestamp) out.push([{ field }]);
        else for (const p of pathsTo(child, timestamp, depth + 1)) out.push([{ field }, ...p]);
      }
      return out;
    }
    default:
      return [];
  }
}

/** A check that follows each path and tests the string at its end. */
function compile(paths: Step[][]): TimestampCheck {
  if (paths.length === 0) return () => null;
  // One stack for every call: `follow` leaves it as it found it, and a check runs to its end
  // synchronously. A new one per call was an array per path of every record a cycle parses.
  const keys: PropertyKey[] = [];
  return (data) => {
    for (const path of paths) {
      const found = follow(data, path, 0, keys);
      if (found) return found;
    }
    return null;
  };
}

/**
 * Follows `path` from step `at` below `node`; `keys` is the way there, one stack pushed and popped
 * as the walk goes (copied only for a problem), since a page holds thousands of records.
 */
function follow(node: unknown, path: Step[], at: number, keys: PropertyKey[]): TimestampProblem | null {
  if (node === null || node === undefined) return null;
  const step = path[at]!;
  if ('each' in step) {
    if (!Array.isArray(node)) return null;
    for (let i = 0; i < node.length; i++) {
      keys.push(i);
      const found = follow(node[i], path, at + 1, keys);
      keys.pop();
      if (found) return found;
    }
    return null;
  }
  const value = (node as Record<string, unknown>)[step.field];
  if (at === path.length - 1) {
    const problem = typeof value === 'string' ? timeProblem(value) : null;
    return problem === null ? null : { path: [...keys, step.field], problem };
  }
  keys.push(step.field);
  const found = follow(value, path, at + 1, keys);
  keys.pop();
  return found;
}
