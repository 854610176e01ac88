/**
 * One checked API call as the handlers see it, and the scoping rules every handler shares:
 * which namespaces a call reaches, "outside your namespaces is not found" and "in an environment
 * you may not read is access denied".
 */
import type { EnvironmentType, Page } from '../../../src/api/schemas.js';
import type { ParamValues } from './request-params.js';
import { SimError } from './sim-error.js';
import type { SimState } from './sim-state.js';
import type { Grant } from './token-grants.js';

/** A call after routing, authentication and parameter checks. */
export interface CallContext {
  grant: Grant;
  /** The `{id}` path parameter, when the path has one. */
  id: number | null;
  query: ParamValues;
  body: ParamValues;
  /** Simulator time of the call. */
  now: number;
}

/** The namespaces a list call covers. `single` is set when exactly one is asked for. */
export interface NamespaceScope {
  nsIds: ReadonlySet<number>;
  single: number | null;
  /** Every namespace of the service: lists need no namespace check. */
  everything: boolean;
}

/** Resolves the `namespace` parameter (code or id) against the token's namespaces. */
export function namespaceScope(state: SimState, grant: Grant, namespace: unknown): NamespaceScope {
  if (namespace === undefined) {
    const single = grant.nsList.length === 1 ? (grant.nsList[0] as number) : null;
    return { nsIds: grant.nsIds, single, everything: grant.allNamespaces };
  }
  const raw = String(namespace);
  const ns = [...state.namespaces.values()].find((n) => n.code === raw || String(n.id) === raw);
  if (!ns || !grant.nsIds.has(ns.id))
    throw new SimError('namespace_not_found', `namespace "${raw}" does not exist or this token does not reach it`);
  return { nsIds: new Set([ns.id]), single: ns.id, everything: state.namespaces.size === 1 };
}

/** A record by id that the token may see, or not_found (records outside its namespaces do not exist for it). */
export function findInScope<T extends { nsId: number }>(
  map: ReadonlyMap<number, T>,
  id: number | null,
  grant: Grant,
  what: string,
): T {
  const record = id === null ? undefined : map.get(id);
  if (!record || !grant.nsIds.has(record.nsId)) throw new SimError('not_found', `${what} ${String(id)} not found`);
  return record;
}

/**
 * A record by id that the token may read: not_found outside its namespaces (it does not exist for
 * the token), access_denied in an environment the token may not read (it exists, the role may not
 * see it: reference §5.4-5).
 */
export function findReadable<T extends { nsId: number }>(
  map: ReadonlyMap<number, T>,
  id: number | null,
  grant: Grant,
  what: string,
  environmentOf: (record: T) => EnvironmentType | null,
): T {
  const record = findInScope(map, id, grant, what);
  const environment = environmentOf(record);
  if (!grant.mayReadById(environment))
    throw new SimError(
      'access_denied',
      `this token may not read ${environment ?? 'unassigned'} records (${what} ${String(id)})`,
    );
  return record;
}

/**
 * One page of a list. Without a filter it is a slice of the pre-sorted list; with one it is a
 * single pass that counts the total and renders only the page's items.
 */
export function pageOf<T, R>(
  source: readonly T[],
  keep: ((t: T) => boolean) | null,
  query: ParamValues,
  render: (t: T) => R,
): Page<R> {
  const limit = (query.limit as number | undefined) ?? 50;
  const offset = (query.offset as number | undefined) ?? 0;
  if (!keep) return { items: source.slice(offset, offset + limit).map(render), total: source.length };
  const items: R[] = [];
  let total = 0;
  for (const t of source) {
    if (!keep(t)) continue;
    if (total >= offset && items.length < limit) items.push(render(t));
    total += 1;
  }
  return { items, total };
}

/** Combines filters; null when there are none (so the list can be sliced). */
export function allOf<T>(filters: (((t: T) => boolean) | null | false | undefined)[]): ((t: T) => boolean) | null {
  const active = filters.filter((f): f is (t: T) => boolean => typeof f === 'function');
  if (active.length === 0) return null;
  if (active.length === 1) return active[0] as (t: T) => boolean;
  return (t) => active.every((f) => f(t));
}
