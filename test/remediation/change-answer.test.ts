/** The answer table: how each answer to a change is handled (reference §7). */
import { describe, expect, it } from 'vitest';
import { ApiError, ApiResponseError, ApiTransportError, ApiUsageError } from '../../src/api/errors.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/api/schemas.js';
import {
  answerStep,
  handleFailure,
  handleResult,
  MAX_ASKED_WAIT_MS,
  MAX_RESEND_DELAY_MS,
  RESEND_DELAY_MS,
  SUSPEND_REACH,
  type AnswerFacts,
  type AnswerStep,
  type ChangeHandling,
} from '../../src/remediation/change-answer.js';

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
    ['function_not_allowed', { kind: 'suspend', code: 'function_not_allowed', reach: 'environment' }],
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

  it('suspends the whole policy for every refusal only a person can fix, except the environment-graded ones: access_denied and function_not_allowed (§5.4-5)', () => {
    expect(Object.fromEntries(SUSPEND_REACH)).toEqual({
      access_denied: 'environment',
      function_not_allowed: 'environment',
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

  it('keeps the backup a backup names, to read it back once its run succeeded', () => {
    expect(handleResult({ state: 'started', run_id: 5, app_id: 1, backup_id: 77, backup_run_id: null })).toEqual({
      kind: 'follow',
      answer: 'started',
      runId: 5,
      backupId: 77,
    });
  });
});

describe('answerStep', () => {
  const MINUTE = 60_000;
  const NOW = 1_000 * MINUTE;
  const BACKOFF = 10 * MINUTE;
  const FOLLOW = 120 * MINUTE;
  const facts = (over: Partial<AnswerFacts> = {}): AnswerFacts => ({
    now: NOW,
    said: 'locked: the app is locked',
    sendCount: 1,
    followTimeoutMs: FOLLOW,
    backoffMs: BACKOFF,
    ...over,
  });
  /** A step with only what the row names, as the table writes it. */
  const step = (reason: string, o: Partial<Omit<AnswerStep, 'audit'>> & { runId?: number | null } = {}) => {
    const { runId = null, ...rest } = o;
    return { audit: { reason, runId }, update: {}, end: null, suspend: null, pollNow: false, ...rest };
  };
  const closed = (outcome: string, reason: string, nextAllowedAt: number, metric: 'refused' | 'failed') => ({
    kind: 'closed' as const,
    outcome,
    reason,
    nextAllowedAt,
    metric,
  });
  const following = (answer: string, runId: number | null) => ({
    status: 'following' as const,
    counted: true,
    answer,
    runId,
    followUntil: NOW + FOLLOW,
    nextAt: NOW,
  });

  it.each<[string, ChangeHandling, AnswerFacts, AnswerStep]>([
    [
      'started: follow the run, counted, until follow_timeout',
      { kind: 'follow', answer: 'started', runId: 7 },
      facts(),
      step('change taken', { runId: 7, update: following('started', 7) }),
    ],
    [
      'already_running: follow the run under way',
      { kind: 'follow', answer: 'already_running', runId: 7 },
      facts(),
      step('joined the run under way', { runId: 7, update: following('already_running', 7) }),
    ],
    [
      'taken without a run: ends at once, told "accepted", next after the backoff',
      { kind: 'follow', answer: 'started', runId: null },
      facts(),
      step('change taken', {
        update: following('started', null),
        end: { kind: 'told', outcome: { kind: 'no_run' }, counted: true, nextAllowedAt: NOW + BACKOFF },
      }),
    ],
    [
      'idempotency_key_reused: followed, its run found with reads at once',
      { kind: 'verify_reused' },
      facts(),
      step('earlier request with this key was taken; verifying with reads', {
        update: following('idempotency_key_reused', null),
        pollNow: true,
      }),
    ],
    [
      'no answer, first send: the same key in a minute',
      { kind: 'resend', reason: 'no_answer' },
      facts(),
      step('no_answer: the same key will be sent again', { update: { nextAt: NOW + RESEND_DELAY_MS } }),
    ],
    [
      'a 5xx on the third send: the wait doubled twice',
      { kind: 'resend', reason: 'server_error' },
      facts({ sendCount: 3 }),
      step('server_error: the same key will be sent again', { update: { nextAt: NOW + 4 * RESEND_DELAY_MS } }),
    ],
    [
      'request_in_progress on the tenth send: at most the longest wait',
      { kind: 'resend', reason: 'request_in_progress' },
      facts({ sendCount: 10 }),
      step('request_in_progress: the same key will be sent again', { update: { nextAt: NOW + MAX_RESEND_DELAY_MS } }),
    ],
    [
      'a Retry-After longer than the doubled wait wins',
      { kind: 'resend', reason: 'server_error', retryAfterMs: 20 * MINUTE },
      facts(),
      step('server_error: the same key will be sent again', { update: { nextAt: NOW + 20 * MINUTE } }),
    ],
    [
      'a Retry-After of a year (a hostile answer): resent after an hour at most',
      { kind: 'resend', reason: 'server_error', retryAfterMs: 365 * 24 * 60 * MINUTE },
      facts(),
      step('server_error: the same key will be sent again', { update: { nextAt: NOW + MAX_ASKED_WAIT_MS } }),
    ],
    [
      'locked: closed quietly, not counted, a new key after the backoff',
      { kind: 'refused_later', code: 'locked' },
      facts(),
      step('refused for now; try again later', {
        end: closed('locked', 'refused for now; try again later', NOW + BACKOFF, 'refused'),
      }),
    ],
    [
      'rate_limited with a Retry-After past the backoff: the next attempt after it',
      { kind: 'refused_later', code: 'rate_limited', retryAfterMs: 30 * MINUTE },
      facts(),
      step('refused for now; try again later', {
        end: closed('rate_limited', 'refused for now; try again later', NOW + 30 * MINUTE, 'refused'),
      }),
    ],
    [
      'rate_limited with a Retry-After of a year: the next attempt after an hour at most',
      { kind: 'refused_later', code: 'rate_limited', retryAfterMs: 365 * 24 * 60 * MINUTE },
      facts(),
      step('refused for now; try again later', {
        end: closed('rate_limited', 'refused for now; try again later', NOW + MAX_ASKED_WAIT_MS, 'refused'),
      }),
    ],
    [
      'retry_coming: left to the service, closed quietly',
      { kind: 'wait_auto_retry', code: 'retry_coming' },
      facts(),
      step('the service will retry by itself', {
        end: closed('retry_coming', 'the service will retry by itself', NOW + BACKOFF, 'refused'),
      }),
    ],
    [
      'not_retryable: stopped on the record, told, no next attempt',
      { kind: 'stop', code: 'not_retryable' },
      facts({ said: 'not_retryable: run 7 cannot be retried' }),
      step('this record cannot be changed this way', {
        end: {
          kind: 'told',
          outcome: { kind: 'stopped', code: 'not_retryable', message: 'not_retryable: run 7 cannot be retried' },
          counted: false,
          nextAllowedAt: null,
        },
      }),
    ],
    [
      'access_denied: closed, and the policy paused in the environment',
      { kind: 'suspend', code: 'access_denied', reach: 'environment' },
      facts(),
      step('refused for a reason only a person can fix', {
        end: closed('suspended', 'access_denied', NOW + BACKOFF, 'failed'),
        suspend: { code: 'access_denied', reach: 'environment' },
      }),
    ],
    [
      'writes_disabled: closed, and the whole policy suspended',
      { kind: 'suspend', code: 'writes_disabled', reach: 'policy' },
      facts(),
      step('refused for a reason only a person can fix', {
        end: closed('suspended', 'writes_disabled', NOW + BACKOFF, 'failed'),
        suspend: { code: 'writes_disabled', reach: 'policy' },
      }),
    ],
    [
      'a bad request: told, not counted, a later attempt after the backoff',
      { kind: 'failed', code: 'invalid_parameter' },
      facts({ said: 'invalid_parameter: now must be a boolean' }),
      step('refused as a bad request', {
        end: {
          kind: 'told',
          outcome: {
            kind: 'failed_request',
            code: 'invalid_parameter',
            message: 'invalid_parameter: now must be a boolean',
          },
          counted: false,
          nextAllowedAt: NOW + BACKOFF,
        },
      }),
    ],
  ])('%s', (_what, handling, f, expected) => {
    expect(answerStep(handling, f)).toEqual(expected);
  });
});
