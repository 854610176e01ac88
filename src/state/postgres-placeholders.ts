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

/**
 * What the translation looks at, leftmost first: a quoted string or identifier (a doubled quote
 * inside is an escaped one; an unclosed one runs to the end), a `--` or a `/* … *\/` comment, all
 * copied as they are; then a `?`, or an `@name` (its name captured).
 */
const TOKEN = /'(?:[^']|'')*'?|"(?:[^"]|"")*"?|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|\?|@([A-Za-z_]\w*)/g;

/** Translates the placeholders of `sql` (see the file's comment); mixing `?` and `@name` is refused, as SQLite does. */
export function postgresPlaceholders(sql: string): PostgresPlaceholders {
  let positional = 0;
  const names: string[] = [];
  const text = sql.replace(TOKEN, (token, name: string | undefined) => {
    if (token === '?') return `$${++positional}`;
    if (name === undefined) return token;
    let n = names.indexOf(name);
    if (n < 0) n = names.push(name) - 1;
    return `$${n + 1}`;
  });
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
