/**
 * Folds text onto one line: summaries are one line without markup, and a reason the service gives
 * may be multi-line (a stack trace). Runs of whitespace around line breaks become one space.
 */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
