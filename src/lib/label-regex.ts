/**
 * The regular expressions of matchers (silences, routes, inhibition, policies, the CLI, the
 * console and Slack): anchored like Alertmanager's (`^(?:re)$`, `.` matching a newline too), and
 * run by RE2's algorithm (re2js), whose time is linear in the text whatever the pattern. A
 * backtracking engine (JavaScript's own) can take hours over one label with a pattern such as
 * `(.?.?.?.?)*X`, and a silence's preview is a GET any web page can make the operator's browser
 * send: the daemon would freeze on it. RE2 has no lookaround and no backreferences; a pattern
 * using them is refused when it is parsed, with RE2's reason.
 */
import type { RE2JS } from 're2js';
import { loadOnUse } from './load-on-use.js';

/** re2js, loaded by the first regular expression a matcher has (most configurations have none). */
const re2js = loadOnUse<typeof import('re2js')>('re2js');

/** A pattern RE2 cannot take; `message` says why, without the pattern. */
export class LabelRegexError extends Error {
  override name = 'LabelRegexError';
}

/** Compiles `source` into a whole-text test; throws {@link LabelRegexError} when RE2 refuses it. */
export function compileLabelRegex(source: string): (text: string) => boolean {
  let re: RE2JS;
  try {
    const { RE2JS: Engine } = re2js();
    re = Engine.compile(source, Engine.DOTALL);
  } catch (err) {
    // re2js says `error parsing regexp: why: \`part\``; keep it, it names no more than the pattern.
    throw new LabelRegexError((err as Error).message);
  }
  return (text) => re.matches(text);
}
