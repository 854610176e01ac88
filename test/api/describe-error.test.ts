/**
 * The one line that says why a source could not be read (`check`'s summary, the "cannot read …"
 * alert): a refused token says which key to set, a service that cannot be reached which to check.
 */
import { expect, it } from 'vitest';
import { describeError } from '../../src/api/describe-error.js';
import { ApiError, ApiTransportError } from '../../src/api/errors.js';

it('says which key to set when the API refuses the token', () => {
  const refused = new ApiError('whoami', { code: 'invalid_token', status: 401, message: 'the token is not valid' });
  expect(describeError(refused)).toBe(
    'the API refused the token (invalid_token, HTTP 401 on whoami): set a valid api.token or api.token_file',
  );
});

it('names api.base_url when no connection to the service can be made', () => {
  const refused = new ApiTransportError('whoami', 'connection', 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4010');
  expect(describeError(refused)).toBe(
    'whoami: connection: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4010: ' +
      'is api.base_url right, and the service reachable from here?',
  );
  // A timeout is the service's slowness, not where it is: said as it is.
  expect(describeError(new ApiTransportError('whoami', 'timeout', 'no answer in 30s'))).toBe(
    'whoami: timeout: no answer in 30s',
  );
});
