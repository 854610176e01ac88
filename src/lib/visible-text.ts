/**
 * Text from the service as a reader sees it, in every medium (Slack, email, the terminal): the
 * characters that would reorder or hide what is shown are written out as `\u{202e}` instead of
 * obeyed. An app named `shop\u202Egnp.exe` (a right-to-left override) would display as
 * "shopexe.png"; written out, it reads `shop\u{202e}gnp.exe`, which shows the trick instead of
 * playing it, and a name with a zero-width space inside cannot pass for the name without it.
 */

/**
 * Format characters that reorder or hide text: the Arabic letter mark, the zero-width space,
 * non-joiner and joiner, the left-to-right and right-to-left marks, the bidi embeddings, overrides
 * and isolates (U+202A–202E, U+2066–2069), the word joiner and invisible operators (U+2060–2064),
 * and the zero-width no-break space (U+FEFF). A character class's body, for a RegExp.
 */
export const HIDDEN = '\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff';

/** C0 and C1 controls and DEL: what a terminal acts on (escape sequences, line breaks). */
const CONTROLS = '\\u0000-\\u001f\\u007f-\\u009f';

const HIDDEN_ONLY = new RegExp(`[${HIDDEN}]`, 'g');
const HIDDEN_AND_CONTROLS = new RegExp(`[${CONTROLS}${HIDDEN}]`, 'g');

/** What {@link visibleText} writes out besides the hidden characters. */
export interface VisibleTextOptions {
  /**
   * Write out control characters too (a terminal obeys them). Off for message text, where each
   * medium folds them itself (a line break becomes a space in a one-line layout).
   */
  controls?: boolean;
}

/** The text with every hidden character (and, if asked, every control) written as `\u{hex}`. */
export function visibleText(text: string, options: VisibleTextOptions = {}): string {
  return text.replace(
    options.controls ? HIDDEN_AND_CONTROLS : HIDDEN_ONLY,
    (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
}
