/**
 * Anything thrown as one line of text: an Error's message (after its name when `named`, for a log
 * line where a TypeError and a StoreError must not read alike), anything else as a string. The one
 * way every layer turns a caught value into words; a caller that knows more (the API client's
 * errors, a secret to scrub) says that first and leaves the rest to this.
 */
export function errorText(err: unknown, options: { named?: boolean } = {}): string {
  if (!(err instanceof Error)) return String(err);
  return options.named ? `${err.name}: ${err.message}` : err.message;
}
