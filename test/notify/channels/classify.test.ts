import { describe, expect, it } from 'vitest';
import { classifyHttpAnswer, classifyNetworkError } from '../../../src/notify/channels/classify.js';
import { NOW } from './fixtures.js';

describe('classifyHttpAnswer', () => {
  it.each([
    [200, null, 'ok', 'ok'],
    [204, null, 'ok', 'ok'],
    [429, null, 'retryable', 'rate limited (HTTP 429)'],
    [500, 'internal_error', 'retryable', 'server error (HTTP 500): internal_error'],
    [503, null, 'retryable', 'server error (HTTP 503)'],
    [408, null, 'retryable', 'request timeout (HTTP 408)'],
    [400, 'invalid_payload', 'permanent', 'rejected (HTTP 400): invalid_payload'],
    [403, 'action_prohibited', 'permanent', 'rejected (HTTP 403): action_prohibited'],
    [404, 'no_service', 'permanent', 'rejected (HTTP 404): no_service'],
    [410, 'channel_is_archived', 'permanent', 'rejected (HTTP 410): channel_is_archived'],
  ])('HTTP %i (%s) → %s', (status, body, outcome, reason) => {
    const result = classifyHttpAnswer({ status, body }, NOW);
    expect(result.outcome).toBe(outcome);
    if (result.outcome !== 'ok') expect(result.reason).toBe(reason);
  });

  it('carries Retry-After of a 429 as retryAfterMs', () => {
    expect(classifyHttpAnswer({ status: 429, headers: { 'retry-after': '30' } }, NOW)).toEqual({
      outcome: 'retryable',
      reason: 'rate limited (HTTP 429)',
      retryAfterMs: 30_000,
    });
  });

  it('puts a body with line breaks on one line', () => {
    const result = classifyHttpAnswer({ status: 400, body: 'bad\r\nthing' }, NOW);
    expect(result).toEqual({ outcome: 'permanent', reason: 'rejected (HTTP 400): bad thing' });
  });
});

describe('Retry-After of a 429 or a 503', () => {
  it.each([429, 503])('HTTP %i carries it as retryAfterMs', (status) => {
    const result = classifyHttpAnswer({ status, headers: { 'retry-after': '120' } }, NOW);
    expect(result).toMatchObject({ outcome: 'retryable', retryAfterMs: 120_000 });
  });

  it.each([500, 502, 504])('HTTP %i does not: its wait is the backoff', (status) => {
    expect(classifyHttpAnswer({ status, headers: { 'retry-after': '120' } }, NOW)).toEqual({
      outcome: 'retryable',
      reason: `server error (HTTP ${status})`,
    });
  });

  it.each([
    ['0', 0],
    ['7', 7000],
    ['999999', 3_600_000],
    [new Date(NOW + 90_000).toUTCString(), 90_000],
    [new Date(NOW - 90_000).toUTCString(), 0],
    ['soon', undefined],
    ['-5', undefined],
    [undefined, undefined],
  ])('%s → wait %s ms (capped at an hour)', (retryAfter, expected) => {
    const result = classifyHttpAnswer({ status: 429, headers: { 'retry-after': retryAfter } }, NOW);
    expect(result.outcome === 'retryable' ? result.retryAfterMs : 'not retryable').toBe(expected);
  });
});

describe('classifyNetworkError', () => {
  it.each([
    ['ECONNREFUSED', undefined, 'network error (ECONNREFUSED)'],
    ['ECONNRESET', undefined, 'network error (ECONNRESET)'],
    ['ECONNABORTED', 250, 'timed out after 250 ms'],
    ['ETIMEDOUT', undefined, 'timed out (ETIMEDOUT)'],
    [undefined, undefined, 'network error (no answer)'],
  ])('%s → retryable: %s', (code, timeout, reason) => {
    expect(classifyNetworkError(code, timeout)).toEqual({ outcome: 'retryable', reason });
  });
});
