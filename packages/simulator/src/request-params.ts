/**
 * Checks query and body parameters against the catalogue's parameter specs: a parameter the
 * function does not define is `unknown_parameter`, a value of the wrong type is
 * `invalid_parameter`, a required body parameter left out is `missing_parameter`. Messages name
 * the parameter and what was expected.
 */
import type { ParamSpec } from '../../../src/api/functions.js';
import { SimError } from './sim-error.js';

/** Parameter values after checking: numbers, booleans and strings. */
export type ParamValues = Record<string, number | boolean | string>;

const INTEGER = /^-?\d+$/;

/** Checks a maximum `limit` for the simulator's options; throws an Error saying what is wrong. */
export function checkMaxLimit(maxLimit: number): number {
  if (!Number.isInteger(maxLimit) || maxLimit < 1)
    throw new Error(`maxLimit must be an integer of at least 1, got ${String(maxLimit)}`);
  return maxLimit;
}

/** Parses query parameters (all strings on the wire) against the function's query spec; `limit` above `maxLimit` is refused. */
export function parseQuery(spec: Record<string, ParamSpec>, search: URLSearchParams, maxLimit: number): ParamValues {
  const out: ParamValues = {};
  for (const name of new Set(search.keys())) {
    const param = spec[name];
    if (!param)
      throw new SimError(
        'unknown_parameter',
        `unknown parameter "${name}"; this function takes: ${Object.keys(spec).join(', ') || 'no parameters'}`,
      );
    const values = search.getAll(name);
    if (values.length > 1)
      throw new SimError('invalid_parameter', `parameter "${name}" is given ${values.length} times; give it once`);
    const raw = values[0] as string;
    switch (param.type) {
      case 'integer': {
        if (!INTEGER.test(raw))
          throw new SimError('invalid_parameter', `parameter "${name}" must be an integer, got "${raw}"`);
        out[name] = Number.parseInt(raw, 10);
        break;
      }
      case 'boolean': {
        if (raw !== 'true' && raw !== 'false')
          throw new SimError('invalid_parameter', `parameter "${name}" must be true or false, got "${raw}"`);
        out[name] = raw === 'true';
        break;
      }
      case 'enum': {
        if (!param.values.includes(raw))
          throw new SimError(
            'invalid_parameter',
            `parameter "${name}" must be one of ${param.values.join(', ')}, got "${raw}"`,
          );
        out[name] = raw;
        break;
      }
      case 'string':
        out[name] = raw;
        break;
    }
  }
  for (const name of ['limit', 'offset'] as const) {
    const value = out[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || value < 0)
      throw new SimError(
        'invalid_parameter',
        `parameter "${name}" must be a non-negative integer, got ${String(value)}`,
      );
    if (name === 'limit' && value > maxLimit)
      throw new SimError(
        'invalid_parameter',
        `parameter "limit" must be at most ${maxLimit} (the most this service gives at once), got ${value}`,
      );
  }
  return out;
}

/** Checks a JSON body (already parsed) against the function's body spec. */
export function parseBody(spec: Record<string, ParamSpec>, body: unknown): ParamValues {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new SimError('invalid_request', 'the body must be a JSON object');
  const out: ParamValues = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    const param = spec[name];
    if (!param)
      throw new SimError(
        'unknown_parameter',
        `unknown parameter "${name}"; this function takes: ${Object.keys(spec).join(', ') || 'no parameters'}`,
      );
    const ok =
      param.type === 'integer'
        ? Number.isInteger(value)
        : param.type === 'boolean'
          ? typeof value === 'boolean'
          : param.type === 'enum'
            ? typeof value === 'string' && param.values.includes(value)
            : typeof value === 'string';
    if (!ok) {
      const expected = param.type === 'enum' ? `one of ${param.values.join(', ')}` : `a ${param.type}`;
      throw new SimError('invalid_parameter', `parameter "${name}" must be ${expected}, got ${JSON.stringify(value)}`);
    }
    out[name] = value as number | boolean | string;
  }
  for (const [name, param] of Object.entries(spec)) {
    if (param.required && out[name] === undefined)
      throw new SimError('missing_parameter', `parameter "${name}" is required`);
  }
  return out;
}
