/**
 * Long text from the service cut where it is read, so that a step reason of megabytes is a few
 * kilobytes everywhere after: in the run's detail, the alert, its event, its notification body and
 * the state. A 7 MB reason cost 357 MB of RSS and 84 MB of state in one `check` before (issue 25,
 * docs/benchmarks.md). The cut keeps the first {@link EDGE_TEXT_MAX} characters and says how long
 * the text was; the API token and other secrets are scrubbed before (the answer's reviver), so a
 * secret is never left half-cut. A surrogate pair is never split.
 */

/** The most characters of one free-text field kept from an answer (a step reason, an attention field). */
export const EDGE_TEXT_MAX = 8_000;

/** `text` itself when short enough; else its start and `… [cut: N characters in all]`. */
export function cutAtEdge(text: string, max = EDGE_TEXT_MAX): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}… [cut: ${text.length} characters in all]`;
}
