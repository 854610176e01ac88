/**
 * The one answer to "do these matchers match these labels?", shared by notification routes,
 * silences, mute windows and remediation policies, so an operator learns one matching rule.
 * Semantics follow Alertmanager: regular expressions are anchored (`^(?:value)$`) and a label
 * that is missing equals the empty string. They run in linear time (RE2, `lib/label-regex.ts`).
 */
import { SEVERITY_RANK, type Severity } from '../lib/alert-vocabulary.js';
import { compileLabelRegex } from '../lib/label-regex.js';
import { HIDDEN } from '../lib/visible-text.js';

/** The four comparisons a matcher can make. */
export type MatchOp = '=' | '!=' | '=~' | '!~';

/** One condition on one label: `app=shop`, `app!=shop`, `app=~sh.*`, `check!~cert.*`. */
export interface LabelMatcher {
  name: string;
  op: MatchOp;
  value: string;
}

/** The labels a matcher looks at; `Labels` from a finding fits. Missing and undefined equal "". */
export type MatchableLabels = Readonly<Record<string, string | undefined>>;

/** A matcher that cannot be used; the message names the culprit. */
export class MatcherError extends Error {
  override name = 'MatcherError';
}

// Longest operators first so `=~` is not read as `=` followed by a value starting with `~`.
const MATCHER_TEXT = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/**
 * Parses `name=value`, `name!=value`, `name=~regex` or `name!~regex` (the value may be wrapped in
 * double quotes, JSON-style, to keep spaces). Throws {@link MatcherError} naming the text.
 */
export function parseMatcher(text: string): LabelMatcher {
  const m = MATCHER_TEXT.exec(text);
  if (!m) {
    throw new MatcherError(
      `invalid matcher ${JSON.stringify(text)}: expected NAME=VALUE, NAME!=VALUE, NAME=~REGEX or NAME!~REGEX ` +
        '(NAME is letters, digits and _, not starting with a digit)',
    );
  }
  const [, name, op, written] = m as unknown as [string, string, MatchOp, string];
  const raw = hiddenWrittenOutRead(written);
  let value = raw;
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) {
    try {
      value = JSON.parse(raw) as string;
    } catch {
      throw new MatcherError(`invalid matcher ${JSON.stringify(text)}: the quoted value is not a valid string`);
    }
  }
  const matcher: LabelMatcher = { name, op, value };
  compileOne(matcher, text);
  return matcher;
}

/** A hidden character (`lib/visible-text.ts`): every reader writes it out, so a value holding one is quoted. */
const HIDDEN_CHARACTER = new RegExp(`[${HIDDEN}]`, 'g');
/** A character written out as `visibleText` writes one: `\u{202e}`. */
const WRITTEN_OUT = /\\u\{([0-9a-fA-F]{1,6})\}/g;

/**
 * The text with each hidden character written out (`\u{202e}`, as the console, the terminal and
 * every message show it) read back as the character, so a value copied from where it is shown
 * matches the label; any other `\u{…}` stays the text it is.
 */
function hiddenWrittenOutRead(text: string): string {
  return text.replace(WRITTEN_OUT, (written, hex: string) => {
    const code = Number.parseInt(hex, 16);
    const char = code <= 0x10ffff ? String.fromCodePoint(code) : '';
    return char.search(HIDDEN_CHARACTER) === 0 ? char : written;
  });
}

/**
 * Renders a matcher back to the text {@link parseMatcher} reads (quoting when needed). A value
 * starting with `~` is quoted too: `app=` followed by `~shop` would read back as the regex `app=~shop`.
 * A hidden character (a bidi override, a zero-width space) is written as its JSON escape (`\u202e`)
 * in a quoted value: what every reader shows in its place (`\u{202e}`) would not read back as it.
 */
export function formatMatcher(matcher: LabelMatcher): string {
  const plain = /^[^\s"~][^\s"]*$/.test(matcher.value) && matcher.value.search(HIDDEN_CHARACTER) < 0;
  const quoted = () =>
    JSON.stringify(matcher.value).replace(
      HIDDEN_CHARACTER,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  return `${matcher.name}${matcher.op}${plain ? matcher.value : quoted()}`;
}

/** The `match` / `match_re` block of routes, policies and mute windows in the config. */
export interface MatchConfig {
  /** Label equals the value; a list means "any of these". */
  match?: Readonly<Record<string, string | readonly string[]>>;
  /** Label matches the (anchored) regular expression. */
  match_re?: Readonly<Record<string, string>>;
}

/**
 * Turns a config match block into matchers. A list value becomes one anchored regex of escaped
 * alternatives, so every consumer sees plain matchers. The block comes from the parsed config,
 * whose schema (`schema-blocks.ts`) has refused a bad label name, an empty list and a regex RE2
 * does not take, each at its key path.
 */
export function matchersFromConfig(config: MatchConfig): LabelMatcher[] {
  const equal = Object.entries(config.match ?? {}).map(([name, value]): LabelMatcher => {
    const values = typeof value === 'string' ? [value] : value;
    // One value is an equality; several, a regex of them all.
    const one = values.length === 1;
    return { name, op: one ? '=' : '=~', value: one ? values[0]! : values.map(escapeRegex).join('|') };
  });
  const re = Object.entries(config.match_re ?? {}).map(([name, value]): LabelMatcher => ({ name, op: '=~', value }));
  return [...equal, ...re];
}

/** A matcher set compiled once (regexes built), for hot paths such as routing every event. */
export type CompiledMatchers = (labels: MatchableLabels) => boolean;

/**
 * Compiles matchers into a predicate. Throws {@link MatcherError} on an invalid regex. An empty
 * list matches everything (a catch-all route).
 */
export function compileMatchers(matchers: readonly LabelMatcher[]): CompiledMatchers {
  const tests = matchers.map((m) => compileOne(m, formatMatcher(m)));
  return (labels) => tests.every((t) => t(labels));
}

/** True when `severity` is `min` or worse. */
export function atLeast(severity: Severity, min: Severity): boolean {
  return SEVERITY_RANK[severity] >= SEVERITY_RANK[min];
}

function compileOne(matcher: LabelMatcher, where: string): CompiledMatchers {
  const { name, op, value } = matcher;
  const read = (labels: MatchableLabels): string => labels[name] ?? '';
  switch (op) {
    case '=':
      return (labels) => read(labels) === value;
    case '!=':
      return (labels) => read(labels) !== value;
    case '=~':
    case '!~': {
      let test: (text: string) => boolean;
      try {
        test = compileLabelRegex(value);
      } catch (err) {
        throw new MatcherError(
          `invalid matcher ${JSON.stringify(where)}: ${JSON.stringify(value)} is not a regular expression RE2 takes (${(err as Error).message})`,
        );
      }
      return op === '=~' ? (labels) => test(read(labels)) : (labels) => !test(read(labels));
    }
    default:
      throw new MatcherError(`invalid matcher ${JSON.stringify(where)}: unknown operator ${JSON.stringify(op)}`);
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
