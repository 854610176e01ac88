/**
 * The one line that says why a source could not be read (`check`'s summary, the "cannot read …"
 * alert): a refused token says which key to set.
 */
import { expect, it } from 'vitest';
import { describeError } from '../../src/api/describe-error.js';
import { ApiError } from '../../src/api/errors.js';

it('says which key to set when the API refuses the token', () => {
  const refused = new ApiError('whoami', { code: 'invalid_token', status: 401, message: 'the token is not valid' });
  expect(describeError(refused)).toBe(
    'the API refused the token (invalid_token, HTTP 401 on whoami): set a valid api.token or api.token_file',
  );
});
