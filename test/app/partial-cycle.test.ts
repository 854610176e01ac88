import { describe, expect, it } from 'vitest';
import { ApiError, ApiTransportError } from '../../src/api/errors.js';
import { boundThatCut } from '../../src/app/partial-cycle.js';

describe('boundThatCut', () => {
  it('takes a 429 past every retry as a bound: what the read saw is still told', () => {
    const storm = new ApiError('runs.get', { code: 'rate_limited', status: 429, message: 'slow down' });
    expect(boundThatCut(storm, undefined)).toBe(storm);
  });

  it.each([
    ['a refusal', new ApiError('runs.get', { code: 'internal_error', status: 500, message: 'boom' })],
    ['no answer', new ApiTransportError('runs.get', 'timeout', 'no complete answer within 30000 ms')],
  ])('fails the read whole on %s', (_, err) => {
    expect(boundThatCut(err, undefined)).toBeUndefined();
  });
});
