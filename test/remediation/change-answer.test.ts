/** The answer table: how each answer to a change is handled (reference §7). */
import { describe, expect, it } from 'vitest';
import { ApiError, ApiResponseError, ApiTransportError, ApiUsageError } from '../../src/api/errors.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/api/schemas.js';
import { handleFailure, handleResult, SUSPEND_REACH } from '../../src/remediation/change-answer.js';

const refusal = (code: ErrorCode, retryAfterMs?: number) =>
  new ApiError('runs.retry', {
    code,
    status: ERROR_STATUS[code],
    message: 'no',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

describe('handleFailure', () => {
  it.each([
    ['idempotency_key_reused', { kind: 'verify_reused' }],
    ['request_in_progress', { kind: 'resend', reason: 'request_in_progress' }],
    ['retry_coming', { kind: 'wait_auto_retry', code: 'retry_coming' }],
    ['not_retryable', { kind: 'stop', code: 'not_retryable' }],
    ['not_found', { kind: 'stop', code: 'not_found' }],
    ['in_progress', { kind: 'refused_later', code: 'in_progress' }],
    ['locked', { kind: 'refused_later', code: 'locked' }],
    ['rate_limited', { kind: 'refused_later', code: 'rate_limited' }],
    ['writes_disabled', { kind: 'suspend', code: 'writes_disabled', reach: 'policy' }],
    ['plan_required', { kind: 'suspend', code: 'plan_required', reach: 'policy' }],
    ['function_not_allowed', { kind: 'suspend', code: 'function_not_allowed', reach: 'policy' }],
    ['access_denied', { kind: 'suspend', code: 'access_denied', reach: 'environment' }],
    ['invalid_token', { kind: 'suspend', code: 'invalid_token', reach: 'policy' }],
    ['api_not_available', { kind: 'suspend', code: 'api_not_available', reach: 'policy' }],
    ['internal_error', { kind: 'resend', reason: 'server_error' }],
    ['unavailable', { kind: 'resend', reason: 'server_error' }],
    ['invalid_parameter', { kind: 'failed', code: 'invalid_parameter' }],
    ['unknown_parameter', { kind: 'failed', code: 'unknown_parameter' }],
    ['idempotency_key_required', { kind: 'failed', code: 'idempotency_key_required' }],
  ] as const)('%s', (code, expected) => {
    expect(handleFailure(refusal(code))).toEqual(expected);
  });

  it('suspends the whole policy for every refusal only a person can fix, except access_denied: its environment only (§5.4)', () => {
    expect(Object.fromEntries(SUSPEND_REACH)).toEqual({
      access_denied: 'environment',
      function_not_allowed: 'policy',
      writes_disabled: 'policy',
      plan_required: 'policy',
      invalid_token: 'policy',
      api_not_available: 'policy',
    });
  });

  it('keeps the Retry-After of a rate limit', () => {
    expect(handleFailure(refusal('rate_limited', 30_000))).toEqual({
      kind: 'refused_later',
      code: 'rate_limited',
      retryAfterMs: 30_000,
    });
  });

  it.each([
    [
      'no answer (timeout)',
      new ApiTransportError('runs.retry', 'timeout', 'x'),
      { kind: 'resend', reason: 'no_answer' },
    ],
    [
      'no answer (aborted at shutdown)',
      new ApiTransportError('runs.retry', 'aborted', 'x'),
      { kind: 'resend', reason: 'no_answer' },
    ],
    [
      'an unreadable 200',
      new ApiResponseError('runs.retry', { status: 200, problem: 'not_json', detail: 'x' }),
      { kind: 'resend', reason: 'unreadable_answer' },
    ],
    [
      'a proxy page',
      new ApiResponseError('runs.retry', { status: 502, problem: 'not_json', detail: 'x' }),
      { kind: 'resend', reason: 'server_error' },
    ],
    ['a usage error', new ApiUsageError('runs.retry', 'x'), { kind: 'failed', code: 'usage_error' }],
  ])('%s', (_what, err, expected) => {
    expect(handleFailure(err)).toEqual(expected);
  });

  it('rethrows what is not an API error (a bug)', () => {
    expect(() => handleFailure(new TypeError('bug'))).toThrow('bug');
  });
});

describe('handleResult', () => {
  it.each(['started', 'already_running'] as const)('%s: follow the run', (state) => {
    expect(handleResult({ state, run_id: 5, app_id: 1, backup_id: null, backup_run_id: null })).toEqual({
      kind: 'follow',
      answer: state,
      runId: 5,
    });
  });
});
