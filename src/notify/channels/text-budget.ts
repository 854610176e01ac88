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
  for (const line of lines) {
    const next = out ? `${out}${separator}${line}` : line;
    if (next.length > max) return ending(out, line);
    out = next;
  }
  return out;
}

/**
 * A message's room for text, spent piece by piece as it is built: Teams refuses a card past about
 * 28 KB, Discord an embed set past 6,000 characters. Each piece is cut to what is left (and to its
 * own limit); once none is left, the builder says so once and stops adding.
 */
export class TextBudget {
  #left: number;

  constructor(total: number) {
    this.#left = total;
  }

  /** What is left, in characters. */
  get left(): number {
    return this.#left;
  }

  /**
   * Spends `text` made by `make(max)` (an escaper that cuts to `max`) with `max` the smaller of
   * `limit` and what is left; null when too little is left for `min` characters.
   */
  take(make: (max: number) => string, limit: number, min = 20): string | null {
    const max = Math.min(limit, this.#left);
    if (max < min) return null;
    const text = make(max);
    this.#left -= text.length;
    return text;
  }

  /** Spends our own text whole (a label, a separator), which is small. */
  spend(text: string): string {
    this.#left -= text.length;
    return text;
  }
}
