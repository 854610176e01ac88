import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/state/store-error.js';
import { errorText } from '../../src/lib/error-text.js';

describe('errorText', () => {
  it.each<[string, unknown, boolean, string]>([
    ['an Error: its message', new Error('disk full'), false, 'disk full'],
    ['an Error, named', new TypeError('x is undefined'), true, 'TypeError: x is undefined'],
    [
      'a subclass with its own name, named',
      new StoreError('s.db', 'locked', 'busy'),
      true,
      'StoreError: state database s.db: busy',
    ],
    ['a thrown string', 'plain words', false, 'plain words'],
    ['a thrown string, named (a string has no name)', 'plain words', true, 'plain words'],
    ['a thrown number', 42, false, '42'],
    ['undefined', undefined, false, 'undefined'],
  ])('%s', (_what, err, named, text) => {
    expect(errorText(err, { named })).toBe(text);
  });
});
