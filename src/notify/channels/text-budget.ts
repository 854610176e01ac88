/**
 * As many whole lines as fit in `max` characters, joined by `separator`: a cut inside one would
 * break a link or a token. `ending` makes the text when a line does not fit, from the lines packed
 * so far and that line; absent, the lines packed so far.
 */
export function packLines(
  lines: readonly string[],
  max: number,
  ending: (packed: string, line: string) => string = (packed) => packed,
  separator = '\n',
): string {
  let out = '';
  // By index, not by `out`'s emptiness: a first line that is empty still takes its separator.
  for (const [i, line] of lines.entries()) {
    const next = i === 0 ? line : `${out}${separator}${line}`;
    if (next.length > max) return ending(out, line);
    out = next;
  }
  return out;
}

/**
 * What a piece of text costs where it is sent: its UTF-16 units (what Discord counts), or, for
 * {@link jsonBytes}, its bytes once written in a JSON body (what Teams counts).
 */
export type TextMeasure = (text: string) => number;

/** A text's bytes in a JSON string: UTF-8 (a CJK character is 3, an emoji 4) with JSON's escapes (a backslash is 2). */
export const jsonBytes: TextMeasure = (text) => Buffer.byteLength(JSON.stringify(text)) - 2;

/**
 * A message's room for text, spent piece by piece as it is built: Teams refuses a card past about
 * 28 KB (bytes, as sent), Discord an embed set past 6,000 characters. Each piece is cut to what is
 * left (and to its own limit, in characters); once none is left, the builder says so once and stops
 * adding.
 */
export class TextBudget {
  #left: number;

  constructor(
    total: number,
    private readonly measure: TextMeasure = (text) => text.length,
  ) {
    this.#left = total;
  }

  /** What is left, as measured. */
  get left(): number {
    return this.#left;
  }

  /**
   * Spends `text` made by `make(max)` (an escaper that cuts to `max` characters) with `max` the
   * smaller of `limit` and what is left; where the text costs more than is left (each character
   * several bytes), it is made again shorter. Null when too little is left for `min` characters.
   */
  take(make: (max: number) => string, limit: number, min = 20): string | null {
    let max = Math.min(limit, this.#left);
    while (max >= min) {
      const text = make(max);
      const cost = this.measure(text);
      if (cost <= this.#left) {
        this.#left -= cost;
        return text;
      }
      // Shorter in proportion, and at least by one, so this ends.
      max = Math.min(max - 1, Math.floor((max * this.#left) / cost));
    }
    return null;
  }

  /** Spends our own text whole (a label, a separator), which is small. */
  spend(text: string): string {
    this.#left -= this.measure(text);
    return text;
  }
}
