/**
 * The stores' placeholders in PostgreSQL's form: `?` becomes `$1`, `$2`… in order, and `@name`
 * becomes one `$n` per name (the same name twice is the same parameter), so both engines run the
 * same SQL text. Quoted strings, quoted identifiers and comments are copied as they are.
 */
import { isPlain } from '../config/secret.js';

/** A statement's text for PostgreSQL, and how to turn the caller's parameters into its values. */
export interface PostgresPlaceholders {
  text: string;
  /** The names of `@name` parameters in `$n` order; null when the statement uses `?` (or none). */
  names: readonly string[] | null;
}

/** Translates the placeholders of `sql` (see the file's comment); mixing `?` and `@name` is refused, as SQLite does. */
export function postgresPlaceholders(sql: string): PostgresPlaceholders {
  let text = '';
  let positional = 0;
  const names: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const skip = quotedEnd(sql, i);
    if (skip > i) {
      text += sql.slice(i, skip);
      i = skip;
    } else if (c === '?') {
      text += `$${++positional}`;
      i += 1;
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))![0];
      let n = names.indexOf(name);
      if (n < 0) n = names.push(name) - 1;
      text += `$${n + 1}`;
      i += 1 + name.length;
    } else {
      text += c;
      i += 1;
    }
  }
  if (positional > 0 && names.length > 0) {
    throw new RangeError(`a statement takes ? or @name parameters, not both: ${sql}`);
  }
  return { text, names: names.length > 0 ? names : null };
}

/** The values of a statement's `$n` parameters from what the caller passed (positional values, or one object of named ones). */
export function placeholderValues(p: PostgresPlaceholders, params: readonly unknown[]): unknown[] {
  // An object of named values for a statement that happens to name none (a filter left out): none.
  if (p.names === null && params.length === 1 && isPlain(params[0])) return [];
  if (p.names === null) return [...params];
  const given = params[0];
  if (params.length !== 1 || typeof given !== 'object' || given === null) {
    throw new TypeError(`this statement takes its parameters as one object of @names (${p.names.join(', ')})`);
  }
  return p.names.map((name) => {
    if (!(name in given)) throw new RangeError(`Missing named parameter "${name}"`);
    return (given as Record<string, unknown>)[name];
  });
}

/** Where the quoted string, quoted identifier or comment starting at `i` ends; `i` when none starts there. */
function quotedEnd(sql: string, i: number): number {
  const c = sql[i];
  if (c === "'" || c === '"') {
    // A doubled quote inside is an escaped one: the scan simply goes on past it.
    let j = i + 1;
    for (;;) {
      const close = sql.indexOf(c, j);
      if (close < 0) return sql.length;
      if (sql[close + 1] !== c) return close + 1;
      j = close + 2;
    }
  }
  if (c === '-' && sql[i + 1] === '-') {
    const end = sql.indexOf('\n', i);
    return end < 0 ? sql.length : end;
  }
  if (c === '/' && sql[i + 1] === '*') {
    const end = sql.indexOf('*/', i + 2);
    return end < 0 ? sql.length : end + 2;
  }
  return i;
}
