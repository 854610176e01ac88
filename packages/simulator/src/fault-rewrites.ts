/**
 * The faults that alter an answer already made: a list that never ends or whose total lies, the
 * caller's token echoed, a field of the wrong type, one record's timestamp or field made odd, JSON
 * cut off. Each works on one answer (a page at most), so it costs no more than the answer itself.
 */
import { ENDLESS_LIST_TOTAL, type FaultSpec } from './fault-injector.js';

/** What the rewrites need beyond the answer. */
export interface RewriteContext {
  /** The caller's bearer token (echoToken). */
  token: string;
  /** The list call's page size (endlessList). */
  limit: number;
  /** An id never given before (endlessList). */
  freshId: () => number;
}

type Json = Record<string, unknown>;

/**
 * Free-text fields the token is written into, in order of preference: the first of these found
 * anywhere in the answer (depth first) takes it.
 */
const FREE_TEXT = ['reason', 'name', 'line', 'detail', 'record', 'progress', 'message'] as const;

/** The body of an answer with the fault's rewrites applied (the body as it was when none applies). */
export function rewriteAnswer(status: number, body: string, fault: FaultSpec, ctx: RewriteContext): string {
  const ok = status === 200;
  const oneRecord = fault.unreadableTime !== undefined || fault.recordField !== undefined;
  const reparsed = ok && (fault.endlessList || fault.wrongType || fault.totalOff !== undefined || oneRecord);
  if (!fault.echoToken && !reparsed && !(ok && fault.malformedJson)) return body;
  let out = body;
  if (fault.echoToken || reparsed) {
    const envelope = JSON.parse(body) as { data?: unknown; error?: { message: string } };
    if (ok && fault.endlessList) endlessPage(envelope.data, ctx);
    if (ok && fault.totalOff && isObject(envelope.data) && Array.isArray(envelope.data.items))
      envelope.data.total = Number(envelope.data.total) + fault.totalOff;
    if (ok && fault.unreadableTime) unreadableTime(envelope.data, fault.unreadableTime);
    if (ok && fault.recordField) recordField(envelope.data, fault.recordField);
    const echoed = [ctx.token, ...(fault.echoText === undefined ? [] : [fault.echoText])];
    // Spelled in escapes: each echoed text is written as a marker first, replaced once serialised.
    const spell = (text: string) => (fault.echoEscaped ? `${ECHO_MARK}${echoed.indexOf(text)}` : text);
    if (fault.echoToken) {
      if (envelope.error) envelope.error.message = `${envelope.error.message} (token ${spell(ctx.token)})`;
      else {
        echoToken(envelope.data, spell(ctx.token));
        if (fault.echoText !== undefined) echoInto(envelope.data, `echoed ${spell(fault.echoText)}`);
        const first = firstObject(envelope.data, (o) => 'id' in o);
        if (first && fault.echoText !== undefined)
          first.extra = { [spell(ctx.token)]: 'echoed', [spell(fault.echoText)]: 'echoed' };
      }
    }
    if (ok && fault.wrongType && isObject(envelope.data)) wrongType(envelope.data);
    out = JSON.stringify(envelope);
    if (fault.echoToken && fault.echoEscaped)
      out = out.replace(new RegExp(`${ECHO_MARK}(\\d+)`, 'g'), (_m, i: string) => escapeAll(echoed[Number(i)]!));
  }
  if (ok && fault.malformedJson) out = out.slice(0, Math.max(1, Math.floor(out.length / 2)));
  return out;
}

/** A full page of fresh ids and a total of a billion: the list's first items, repeated. */
function endlessPage(data: unknown, ctx: RewriteContext): void {
  if (!isObject(data) || !Array.isArray(data.items) || typeof data.total !== 'number') return;
  // As the fault promises: a list with nothing in it stays empty (not a total of a billion and no items).
  if (data.items.length === 0) return;
  const source = data.items as Json[];
  const items: Json[] = [];
  for (let i = 0; i < ctx.limit && source.length > 0; i += 1)
    items.push({ ...source[i % source.length], id: ctx.freshId() });
  data.items = items;
  data.total = ENDLESS_LIST_TOTAL;
}

/** Stands for an echoed text until the answer is serialised (`echoEscaped`). */
const ECHO_MARK = '@@echo@@';

/** Every character of `text` as a JSON `\uXXXX` escape. */
function escapeAll(text: string): string {
  return [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
}

/** The token as the first record's id and inside the first free-text field found. */
function echoToken(data: unknown, token: string): void {
  const withId = firstObject(data, (o) => 'id' in o);
  if (withId) withId.id = token;
  echoInto(data, `token ${token}`);
}

/** `text` inside the first free-text field found. */
function echoInto(data: unknown, text: string): void {
  for (const key of FREE_TEXT) {
    const holder = firstObject(data, (o) => typeof o[key] === 'string' || (key in o && o[key] === null));
    if (!holder) continue;
    const was = holder[key];
    holder[key] = typeof was === 'string' && was !== '' ? `${was} (${text})` : `${text} refused`;
    return;
  }
}

/** One field of the wrong type: total as a string, else an item's or the record's id, else another. */
function wrongType(data: Json): void {
  const items = Array.isArray(data.items) ? (data.items as Json[]) : null;
  if (typeof data.total === 'number') data.total = String(data.total);
  else if (items?.[0] && typeof items[0].id === 'number') items[0].id = String(items[0].id);
  else if (typeof data.id === 'number') data.id = String(data.id);
  else if (typeof data.run_id === 'number') data.run_id = String(data.run_id);
  else if (typeof data.login === 'string') data.login = 42;
  else if (typeof data.truncated === 'boolean') data.truncated = 'no';
}

/** What an unreadable timestamp reads: a time to a person, none to a parser. */
export const UNREADABLE_TIME = 'sometime yesterday';

/** The record of an answer a one-record fault works on: the item with `id` (or the first), or the answer itself. */
function targetRecord(data: unknown, id: number | undefined): Json | null {
  if (!isObject(data)) return null;
  const items = Array.isArray(data.items) ? (data.items as unknown[]).filter(isObject) : null;
  if (items) return (id === undefined ? items[0] : items.find((i) => i.id === id)) ?? null;
  return id === undefined || data.id === id ? data : null;
}

/** One record's timestamp (its `field`, else its first `…_at` field holding a time) made unreadable. */
function unreadableTime(data: unknown, spec: NonNullable<FaultSpec['unreadableTime']>): void {
  const record = targetRecord(data, spec.id);
  if (!record) return;
  const field = spec.field ?? Object.keys(record).find((k) => k.endsWith('_at') && typeof record[k] === 'string');
  if (field !== undefined) record[field] = UNREADABLE_TIME;
}

/** One field of one record (a path: `urls.0.ssl_status`) set to the fault's value. */
function recordField(data: unknown, spec: NonNullable<FaultSpec['recordField']>): void {
  let node: unknown = targetRecord(data, spec.id);
  const path = spec.field.split('.');
  for (const key of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return;
    node = (node as Record<string, unknown>)[key];
  }
  if (node !== null && typeof node === 'object') (node as Record<string, unknown>)[path.at(-1)!] = valueOf(spec);
}

/** The value a recordField fault sets: as given, or built as large as it asks (`repeat`, `fields`). */
function valueOf(spec: NonNullable<FaultSpec['recordField']>): unknown {
  const { value, repeat, fields } = spec;
  if (repeat !== undefined && typeof value === 'string') return value.repeat(repeat);
  if (fields !== undefined && isObject(value)) {
    const wide: Json = { ...value };
    for (let i = 0; i < fields; i++) wide[`f${i}`] = `v${i}`;
    return wide;
  }
  return value;
}

/** The first object, depth first from `value` itself, that `test` accepts. */
function firstObject(value: unknown, test: (o: Json) => boolean): Json | null {
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = firstObject(v, test);
      if (found) return found;
    }
    return null;
  }
  if (!isObject(value)) return null;
  if (test(value)) return value;
  for (const v of Object.values(value)) {
    const found = firstObject(v, test);
    if (found) return found;
  }
  return null;
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
