import { ApiError, ApiTransportError } from '../api/errors.js';
import { FUNCTIONS, type FunctionSpec, type Permission } from '../api/functions.js';
import { errorText } from '../lib/error-text.js';

/**
 * One line saying why a source could not be read, for alerts and the `check` summary. The API
 * client's errors already name the function and never hold the token; other errors keep their
 * message. A refused token is said in plain words, with the key to set, because it is the one an
 * operator fixes first.
 */
export function describeError(err: unknown): string {
  if (err instanceof ApiError && err.code === 'invalid_token') {
    return `the API refused the token (invalid_token, HTTP ${err.status} on ${err.fn}): set a valid api.token or api.token_file`;
  }
  if (err instanceof ApiTransportError && err.reason === 'connection') {
    return `${err.message}: is api.base_url right, and the service reachable from here?`;
  }
  return errorText(err);
}

/** A refusal that will not go away by itself: the token lacks what the job needs. */
export interface PermissionDenial {
  fn: string;
  code: 'function_not_allowed' | 'access_denied';
  permission: Permission;
}

/**
 * The permission the token lacks, when `err` says so: `function_not_allowed`, or `access_denied`
 * on a list (a read without an id, so not one record's environment but the whole function).
 * Anything else (outages, a single record refused) is not a denial and is retried every cycle.
 */
export function permissionDenial(err: unknown): PermissionDenial | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const spec = (FUNCTIONS as Record<string, FunctionSpec>)[err.fn];
  if (!spec) return undefined;
  const { code } = err;
  // access_denied on a read by id is the record's environment (§5.4), not the function's.
  if (code !== 'function_not_allowed' && (code !== 'access_denied' || spec.path.includes('{id}'))) return undefined;
  return { fn: err.fn, code, permission: spec.permission };
}
