import { describe, expect, it } from 'vitest';
import { placeholderValues, postgresPlaceholders } from '../../src/state/postgres-placeholders.js';

describe('postgresPlaceholders', () => {
  it.each([
    ['no parameters', 'SELECT 1', 'SELECT 1', null],
    ['? in order', 'SELECT * FROM t WHERE a = ? AND b > ?', 'SELECT * FROM t WHERE a = $1 AND b > $2', null],
    ['@name, the same name twice is one parameter', 'VALUES (@a, @b, @a)', 'VALUES ($1, $2, $1)', ['a', 'b']],
    ['? in a string is text', `SELECT '?' || ? AS q`, `SELECT '?' || $1 AS q`, null],
    ['a doubled quote does not end a string', `SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`, null],
    [
      '@ in a quoted identifier is a name',
      `SELECT "a@b" FROM t WHERE x = @x`,
      `SELECT "a@b" FROM t WHERE x = $1`,
      ['x'],
    ],
    ['? in comments is text', 'SELECT ? -- why?\n/* or ? */ , ?', 'SELECT $1 -- why?\n/* or ? */ , $2', null],
    ['@ not followed by a name is text', `SELECT '@' || @v, 1 @ 2`, `SELECT '@' || $1, 1 @ 2`, ['v']],
    [
      'a JSON path in a string is text',
      `SELECT json_extract(x, '$.a') FROM t WHERE id = ?`,
      `SELECT json_extract(x, '$.a') FROM t WHERE id = $1`,
      null,
    ],
  ])('%s', (_case, sql, text, names) => {
    expect(postgresPlaceholders(sql)).toEqual({ text, names });
  });

  it('refuses ? and @name in one statement, as SQLite does', () => {
    expect(() => postgresPlaceholders('SELECT ?, @a')).toThrow(/\? or @name parameters, not both/);
  });
});

describe('placeholderValues', () => {
  it.each([
    ['positional values as they are', 'SELECT ?, ?', [1, 'a'], [1, 'a']],
    ['named values in $n order, repeats once', 'VALUES (@b, @a, @b)', [{ a: 1, b: 2, extra: 3 }], [2, 1]],
    ['a named value may be null', 'VALUES (@a)', [{ a: null }], [null]],
    ['an object of names for a statement without any (a filter left out)', 'SELECT * FROM t', [{}], []],
  ])('%s', (_case, sql, params, values) => {
    expect(placeholderValues(postgresPlaceholders(sql), params)).toEqual(values);
  });

  it.each([
    ['a missing name', 'VALUES (@a, @b)', [{ a: 1 }], /Missing named parameter "b"/],
    ['positional values for names', 'VALUES (@a)', [1], /one object of @names \(a\)/],
  ])('refuses %s', (_case, sql, params, message) => {
    expect(() => placeholderValues(postgresPlaceholders(sql), params)).toThrow(message);
  });
});
