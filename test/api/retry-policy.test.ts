import { describe, expect, it } from 'vitest';
import { RetryPolicy, type RetryContext } from '../../src/api/retry-policy.js';
import {
  ApiError,
  ApiResponseError,
  ApiTransportError,
  ApiPaginationError,
  type ApiCallError,
} from '../../src/api/errors.js';

const now = Date.UTC(2026, 10, 1, 12, 0, 0);
const refusal = (code: string, status: number, retryAfterMs?: number) =>
  new ApiError('apps.list', { code, status, message: 'x', retryAfterMs });
const html502 = new ApiResponseError('apps.list', { status: 502, problem: 'not_json', detail: '<html>' });
const badSchema = new ApiResponseError('apps.list', { status: 200, problem: 'schema', detail: 'items[0].id' });
const transport = (reason: 'timeout' | 'connection' | 'deadline' | 'aborted') =>
  new ApiTransportError('apps.list', reason, 'x');

// random() = 0.5: half of each backoff cap, so the expected waits are exact.
const policy = new RetryPolicy({ maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0.5 });
const ctx = (error: ApiCallError, over: Partial<RetryContext> = {}): RetryContext => ({
  kind: 'read',
  error,
  attempt: 1,
  now,
  ...over,
});

describe('RetryPolicy.decide', () => {
  it.each([
    ['429 without Retry-After', refusal('rate_limited', 429), { retry: true, reason: 'rate_limited', delayMs: 50 }],
    [
      '429 with Retry-After',
      refusal('rate_limited', 429, 2_000),
      { retry: true, reason: 'rate_limited', delayMs: 2_000 },
    ],
    ['internal_error 500', refusal('internal_error', 500), { retry: true, reason: 'server_error', delayMs: 50 }],
    ['unavailable 503', refusal('unavailable', 503), { retry: true, reason: 'server_error', delayMs: 50 }],
    ['an HTML 502 page', html502, { retry: true, reason: 'server_error', delayMs: 50 }],
    ['a timeout', transport('timeout'), { retry: true, reason: 'timeout', delayMs: 50 }],
    ['a connection error', transport('connection'), { retry: true, reason: 'connection', delayMs: 50 }],
    ['not_found 404', refusal('not_found', 404), { retry: false, reason: 'not_retryable' }],
    ['access_denied 403', refusal('access_denied', 403), { retry: false, reason: 'not_retryable' }],
    ['invalid_parameter 400', refusal('invalid_parameter', 400), { retry: false, reason: 'not_retryable' }],
    ['a 200 that does not fit the schema', badSchema, { retry: false, reason: 'not_retryable' }],
    ['a passed deadline', transport('deadline'), { retry: false, reason: 'not_retryable' }],
    ['an abort', transport('aborted'), { retry: false, reason: 'not_retryable' }],
    [
      'a shifting list',
      new ApiPaginationError('runs.list', { shift: 'total_changed', walks: 3, detail: '' }),
      { retry: false, reason: 'not_retryable' },
    ],
  ])('a read failing with %s → %o', (_name, error, expected) => {
    expect(policy.decide(ctx(error))).toEqual(expected);
  });

  it.each([refusal('internal_error', 500), refusal('rate_limited', 429, 10), html502, transport('timeout')])(
    'never retries a change (%s)',
    (error) => {
      expect(policy.decide(ctx(error, { kind: 'change' }))).toEqual({ retry: false, reason: 'change_not_retried' });
    },
  );

  it('backs off exponentially up to the cap', () => {
    const waits = [1, 2, 3, 4, 5].map((attempt) => {
      const d = new RetryPolicy({ maxRetries: 10, baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0.999 }).decide(
        ctx(transport('timeout'), { attempt }),
      );
      return d.retry ? d.delayMs : -1;
    });
    expect(waits).toEqual([99, 199, 399, 799, 999]);
  });

  it('stops after maxRetries retries', () => {
    expect(policy.decide(ctx(html502, { attempt: 3 })).retry).toBe(true);
    expect(policy.decide(ctx(html502, { attempt: 4 }))).toEqual({ retry: false, reason: 'attempts_exhausted' });
  });

  it('does not wait past the deadline', () => {
    expect(policy.decide(ctx(refusal('rate_limited', 429, 5_000), { deadline: now + 4_000 }))).toEqual({
      retry: false,
      reason: 'past_deadline',
    });
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs', () => {
    const p = new RetryPolicy({ maxRetryAfterMs: 1_000 });
    expect(p.decide(ctx(refusal('rate_limited', 429, 120_000)))).toEqual({
      retry: false,
      reason: 'retry_after_too_long',
    });
  });
});
