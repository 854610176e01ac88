/**
 * `readById`: which failures of a read by id set the record aside, which mean it is gone, and
 * which fail the read whole. The errors are the client's own (built as it builds them); the reads
 * over HTTP are in test/app/watchdog-quarantine.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, ApiResponseError, ApiTransportError } from '../../src/api/errors.js';
import { Quarantine } from '../../src/api/quarantine.js';
import { readById, type NotFoundMeans } from '../../src/collectors/read-by-id.js';

const refused = (code: string, status = 403) => new ApiError('runs.get', { code, status, message: 'no' });
const mistyped = new ApiResponseError('runs.get', {
  status: 200,
  problem: 'schema',
  detail: 'created_at: bad',
  record: { reason: 'unreadable', detail: 'created_at: bad' },
});

describe('readById', () => {
  it.each([
    ['access_denied', refused('access_denied'), 'gone', 'access_denied'],
    ['access_denied', refused('access_denied'), 'unreadable', 'access_denied'],
    ['not_found of a record no list names', refused('not_found', 404), 'gone', 'gone'],
    ['not_found right after a list named it', refused('not_found', 404), 'unreadable', 'not_found'],
    ['a record that does not fit', mistyped, 'gone', 'unreadable'],
    ['internal_error', refused('internal_error', 500), 'unreadable', 'throws'],
    ['function_not_allowed', refused('function_not_allowed'), 'unreadable', 'throws'],
    ['a timeout', new ApiTransportError('runs.get', 'timeout', 'slow'), 'unreadable', 'throws'],
  ] as const)('%s (not_found means %s)', async (_name, err, notFound: NotFoundMeans, expected) => {
    const quarantine = new Quarantine();
    const read = readById({ quarantine }, 'runs.get', 42, () => Promise.reject(err), notFound);
    if (expected === 'throws') {
      await expect(read).rejects.toBe(err);
      expect(quarantine.records()).toEqual([]);
      return;
    }
    expect(await read).toBeUndefined();
    expect(quarantine.records()).toEqual(
      expected === 'gone' ? [] : [expect.objectContaining({ kind: 'run', id: 42, reason: expected, fn: 'runs.get' })],
    );
  });

  it('without a quarantine, a refused record fails the read, as before', async () => {
    const err = refused('access_denied');
    await expect(readById({}, 'runs.get', 42, () => Promise.reject(err), 'unreadable')).rejects.toBe(err);
  });

  it('a record that reads is returned as read', async () => {
    expect(await readById({}, 'runs.get', 42, () => Promise.resolve({ id: 42 }), 'gone')).toEqual({ id: 42 });
  });
});
