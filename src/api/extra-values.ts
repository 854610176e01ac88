/**
 * Values beyond those the reference states (§3), made known by the admin: `api.extra_values` reads
 * each one as the stated value it means (`ssl_status: { revoked: error }`). The schemas keep the
 * reference's values, so every check still judges a closed set; a record whose every odd value is
 * configured is read with those values in their place, and any other is set aside as before
 * (`unknown_value`, `quarantine.ts`), its message naming the key that would let it in.
 */
import type { z } from 'zod';
import {
  attentionSectionSchema,
  backupHealthSchema,
  changeResultSchema,
  environmentTypeSchema,
  restorePointSchema,
  sslStatusSchema,
  watcherStateSchema,
  appUpgradeSchema,
  urlRecordSchema,
} from './schemas.js';
import { setAt, valueAt } from '../lib/value-at.js';
import { ownValue } from '../lib/own-value.js';

/**
 * The fields whose values the reference states, by the key `api.extra_values` names them with
 * (the field's name, or its parent's and its own where a bare name would be ambiguous), and
 * their stated values.
 */
export const STATED_VALUES = {
  ssl_status: sslStatusSchema.options,
  public_check: urlRecordSchema.shape.public_check.unwrap().options,
  backup_health: backupHealthSchema.options,
  environment_type: environmentTypeSchema.options,
  'upgrade.purpose': appUpgradeSchema.shape.purpose.options,
  'watcher.state': watcherStateSchema.options,
  outcome: restorePointSchema.shape.outcome.options,
  state: changeResultSchema.shape.state.options,
  severity: attentionSectionSchema.shape.severity.options,
  kind: attentionSectionSchema.shape.kind.options,
} as const satisfies Record<string, readonly string[]>;

/** A field `api.extra_values` can name. */
export type StatedField = keyof typeof STATED_VALUES;

/** `api.extra_values`: per stated field, each extra value and the stated value it means. */
export type ExtraValues = Readonly<Partial<Record<StatedField, Readonly<Record<string, string>>>>>;

/**
 * The `api.extra_values` key of the field at `path` within a record (`urls[0].ssl_status` →
 * `ssl_status`, `watcher.state` → `watcher.state`), or undefined when the reference states no
 * values for it.
 */
export function statedFieldAt(path: readonly PropertyKey[]): StatedField | undefined {
  const names = path.filter((k) => typeof k === 'string');
  const own = names.at(-1);
  const parent = names.at(-2);
  if (own === undefined) return undefined;
  const pair = parent === undefined ? undefined : `${parent}.${own}`;
  if (pair !== undefined && pair in STATED_VALUES) return pair as StatedField;
  // A bare `state` is the change result's; any other object's state (a run's) is free text.
  if (own === 'state' && parent !== undefined) return undefined;
  return own in STATED_VALUES ? (own as StatedField) : undefined;
}

/** The config key that makes `value` of the field at `path` known: `api.extra_values.ssl_status.revoked`. */
export function extraValueKey(path: readonly PropertyKey[], value: string): string | undefined {
  const field = statedFieldAt(path);
  return field === undefined ? undefined : `api.extra_values.${field}.${value}`;
}

/**
 * `item` with each value beyond the stated ones that `extra` knows put as the stated value it
 * means, when that makes it fit `schema`; undefined when `extra` does not know every one of them
 * (the record is then judged as it came). `issues` are the schema's complaints about `item`.
 */
export function withExtraValues(
  schema: z.ZodType,
  item: unknown,
  issues: readonly z.core.$ZodIssue[],
  extra: ExtraValues | undefined,
): { data: unknown } | undefined {
  if (!extra || Object.keys(extra).length === 0 || issues.length === 0) return undefined;
  let copy: unknown = structuredClone(item);
  for (const issue of issues) {
    if (issue.code !== 'invalid_value') return undefined;
    const value = valueAt(copy, issue.path);
    const field = statedFieldAt(issue.path);
    const known = field === undefined ? undefined : extra[field];
    // The admin's own keys only.
    const meant = typeof value === 'string' && known ? ownValue(known, value) : undefined;
    if (meant === undefined) return undefined;
    copy = setAt(copy, issue.path, meant);
  }
  const parsed = schema.safeParse(copy);
  return parsed.success ? { data: parsed.data } : undefined;
}
