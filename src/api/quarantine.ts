/**
 * One bad record is one bad record: the records a read could not take, each judged alone.
 *
 * The reference grades reads by id by the record's environment (§5.4), leaves timestamp formats
 * open (§2) and lists only "the values that are stated" (§3). So a list may name a record that
 * `get` refuses, one record may carry a timestamp or a type the client cannot read, or a value
 * beyond the stated ones (`ssl_status: revoked`). Each such record is quarantined: set aside with
 * its kind, its id when that much is readable, and a reason from a small fixed set, while every
 * other record of the read is taken as usual. Only the envelope or the page itself failing fails a
 * read (DESIGN.md, "Validate at the edge").
 */
import { z } from 'zod';
import type { Subject } from '../lib/alert-vocabulary.js';
import { ApiError, ApiResponseError } from './errors.js';
import type { RecordProblem } from './record-problem.js';
import { pageSchema, timestampSchema } from './schemas.js';
import { timestampCheckOf } from './timestamp-check.js';
import { extraValueKey, withExtraValues, type ExtraValues } from './extra-values.js';
import { hasNoZone } from '../lib/parse-time.js';
import { setAt, valueAt } from '../lib/value-at.js';
import { getOrAdd } from '../lib/get-or-add.js';

/** The kinds of record a read can set aside, named after the resource. */
export type RecordKind =
  'app' | 'run' | 'url' | 'backup' | 'server' | 'installer' | 'project' | 'restore_point' | 'attention_section';

/**
 * The kind of record `fn` reads: its resource's name in the singular (`restore_points.list` reads
 * restore points), an attention summary's records being its sections; undefined for functions that
 * read no record (whoami, logs, changes).
 */
export function recordKindOf(fn: string): RecordKind | undefined {
  const [resource, verb] = fn.split('.');
  if (verb !== 'get' && verb !== 'list') return undefined;
  return resource === 'attention' ? 'attention_section' : (resource!.slice(0, -1) as RecordKind);
}

/** One record set aside: what was wrong with it, and which record of which read. */
export interface QuarantinedRecord extends RecordProblem {
  kind: RecordKind;
  /** Its id, when that much of it could be read. */
  id?: number;
  /** The function that read it. */
  fn: string;
  /**
   * The alert subjects whose judgement this record decides: its own, and the app's for a record
   * of one app (a backup, a restore point). Without an id, every subject of its type (`id`
   * absent): which one it is cannot be known, so none of them can be judged over.
   */
  subjects: readonly Subject[];
}

/** Where the records a read sets aside are handed; one per cycle of a job. */
export interface QuarantineSink {
  add(record: QuarantinedRecord): void;
}

/** Each schema's compiled twin, made on its first parse. */
const COMPILED = new WeakMap<z.ZodType, z.ZodType>();

/**
 * `schema` compiled by zod (`z.compile`): the same answers and the same issues (a record that does
 * not fit is parsed again by the runtime parser for them), without the runtime parser's walk and
 * its objects per field. At 10,000 apps a steady cycle parses ~90,000 records: zod's runtime parse
 * allocated ~110 MB of the cycle's ~490 MB, and a compiled parse of a backup or an app's view takes
 * a quarter of the time (measured 2026-11-28, docs/benchmarks.md).
 */
export function compiledSchema<S extends z.ZodType>(schema: S): S {
  return getOrAdd(COMPILED, schema, () => z.compile(schema)) as S;
}

/** What does not fit in a record or an answer: a zod issue, or the first timestamp that cannot be read. */
export interface Misfit {
  path: PropertyKey[];
  message: string;
  code?: string;
}

/** What a refusal of a time without a zone says to set (`api.zoneless_timestamps`). */
const ZONELESS_HINT = '; set api.zoneless_timestamps: utc if the service writes its times in UTC';

/**
 * Parses one record with `schema` (a record schema or a view of it) and checks its timestamps;
 * answers the parsed record or what is wrong with it (`problem`, undefined when it reads) and what
 * does not fit (`issues`). A failure whose every issue is a string outside a stated set of values
 * (a zod enum) is `unknown_value`; anything else `unreadable`. With `zonelessAsUtc` a timestamp
 * without a zone is read as UTC (`api.zoneless_timestamps: utc`); else it is unreadable.
 */
export function parseRecord(
  schema: z.ZodType,
  item: unknown,
  extra?: ExtraValues,
  zonelessAsUtc = false,
): { ok: true; data: unknown; problem?: undefined } | { ok: false; problem: RecordProblem; issues: readonly Misfit[] } {
  const parsed = compiledSchema(schema).safeParse(item);
  // Values beyond the stated ones the admin made known (`api.extra_values`): read as configured.
  const known = parsed.success ? parsed : withExtraValues(schema, item, parsed.error.issues, extra);
  const check = timestampCheckOf(schema, timestampSchema);
  let unreadable = known && check(known.data);
  // The reference states no format (§2): a service that writes UTC without saying so, as configured.
  while (known && unreadable && zonelessAsUtc && readAsUtc(known.data, unreadable.path)) unreadable = check(known.data);
  if (known && !unreadable) return { ok: true, data: known.data };
  // What does not fit: zod's issues, or else the first timestamp that cannot be read.
  const issues: Misfit[] = unreadable
    ? [
        {
          path: unreadable.path,
          message: unreadable.problem + (isZoneless(item, unreadable.path) ? ZONELESS_HINT : ''),
        },
      ]
    : parsed.error!.issues;
  const first = issues[0]!;
  const value = valueAt(item, first.path);
  if (issues.every((i) => i.code === 'invalid_value' && typeof valueAt(item, i.path) === 'string')) {
    const field = describePath(first.path);
    const key = extraValueKey(first.path, String(value));
    return {
      ok: false,
      issues,
      problem: {
        reason: 'unknown_value',
        field,
        value: String(value),
        detail:
          `${field}: ${JSON.stringify(value)} is not one of the values the reference states` +
          (key ? ` (to read it as one, set ${key} to the stated value it means)` : ''),
        ...(key && { configKey: key }),
      },
    };
  }
  const more = issues.length > 1 ? ` (+${issues.length - 1} more)` : '';
  return {
    ok: false,
    issues,
    problem: { reason: 'unreadable', detail: `${describePath(first.path)}: ${first.message}${more}` },
  };
}

/** Whether the value at `path` is a timestamp without a zone. */
function isZoneless(data: unknown, path: readonly PropertyKey[]): boolean {
  const value = valueAt(data, path);
  return typeof value === 'string' && hasNoZone(value);
}

/** The timestamp without a zone at `path` given the zone UTC, in place; false when it is not one. */
function readAsUtc(data: unknown, path: readonly PropertyKey[]): boolean {
  if (!isZoneless(data, path)) return false;
  setAt(data, path, `${valueAt(data, path) as string}Z`);
  return true;
}

/** The envelope of a list answer, its items left unread: what must fit for a page to be read at all. */
export const pageEnvelopeSchema = pageSchema(z.unknown());

/**
 * The element schema of the array field `field` of an object schema: a page schema's item schema
 * (`items`), an attention summary's section schema (`sections`); undefined when it has none.
 */
export function elementSchemaOf(schema: z.ZodType, field: string): z.ZodType | undefined {
  return (schema as unknown as { shape?: Record<string, { element?: z.ZodType }> }).shape?.[field]?.element;
}

/**
 * The quarantined record for `item` of `fn` (a list item, or the answer of a read by id) and its
 * problem; the id is taken only when it is a positive integer, as the reference gives ids.
 */
export function quarantined(fn: string, item: unknown, problem: RecordProblem, id?: number): QuarantinedRecord {
  const kind = recordKindOf(fn) ?? 'app';
  const own = id ?? idIn(item, 'id');
  return { kind, ...(own !== undefined && { id: own }), fn, ...problem, subjects: subjectsOf(kind, own, item) };
}

/**
 * What a failed read by id means for its record, or undefined when the failure is not about that
 * record (the token, the function, the network, a deadline: those fail the read whole).
 */
export function recordProblemOf(err: unknown): RecordProblem | undefined {
  // access_denied on a read by id is the record's environment (§5.4); on a list, the function's.
  if (err instanceof ApiError && (err.code === 'access_denied' || err.code === 'not_found'))
    return { reason: err.code, detail: `${err.fn} answered ${err.code}` };
  if (err instanceof ApiResponseError && err.problem === 'schema') return err.record ?? undefined;
  return undefined;
}

/** The kinds of record that are the lifecycle's subject types, under the same name. */
const SUBJECT_KINDS: ReadonlySet<RecordKind> = new Set(['app', 'run', 'url', 'backup', 'server', 'installer']);

function subjectsOf(kind: RecordKind, id: number | undefined, item: unknown): Subject[] {
  const out: Subject[] = [];
  // Safe: the kinds of SUBJECT_KINDS are subject types by the same name.
  const type = SUBJECT_KINDS.has(kind) ? (kind as Subject['type']) : undefined;
  if (type) out.push(id === undefined ? { type } : { type, id });
  // A section of the attention summary: which of its items' alerts it decides cannot be told apart.
  if (kind === 'attention_section') out.push({ type: 'attention' });
  // A backup or restore point decides its app's judgement (its newest backup, its held point).
  if (kind === 'backup' || kind === 'restore_point') {
    const appId = idIn(item, 'app_id');
    out.push(appId === undefined ? { type: 'app' } : { type: 'app', id: appId });
  }
  return out;
}

/** The id in `item`'s field `key` (`id`, `app_id`), when it is a positive integer, as the reference gives ids. */
function idIn(item: unknown, key: string): number | undefined {
  const value = typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[key] : undefined;
  return Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined;
}

/**
 * A zod issue path as `urls[0].ssl_status`; with the `data` it is in, `items[3](id 42).state`, naming
 * each list item by its id when it has one. `whole` names the empty path.
 */
export function describePath(path: readonly PropertyKey[], data?: unknown, whole = '(record)'): string {
  let out = '';
  let node: unknown = data;
  for (const key of path) {
    if (typeof key === 'number') {
      out += `[${key}]`;
      node = Array.isArray(node) ? node[key] : undefined;
      const id = typeof node === 'object' && node !== null ? (node as { id?: unknown }).id : undefined;
      if (typeof id === 'number' || typeof id === 'string') out += `(id ${id})`;
    } else {
      out += out === '' ? String(key) : `.${String(key)}`;
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[String(key)] : undefined;
    }
  }
  return out === '' ? whole : out;
}

/** The records one cycle set aside, one per record (kind and id; reason and detail for those without an id). */
export class Quarantine implements QuarantineSink {
  readonly #records = new Map<string, QuarantinedRecord>();

  /** Sets a record aside; the same record met twice (a walk read again) counts once. */
  add(record: QuarantinedRecord): void {
    const key =
      record.id === undefined
        ? `${record.kind}:?:${record.fn}:${record.reason}:${record.detail}`
        : `${record.kind}:${record.id}`;
    if (!this.#records.has(key)) this.#records.set(key, record);
  }

  /** Every record set aside, in the order met. */
  records(): QuarantinedRecord[] {
    return [...this.#records.values()];
  }
}
