/**
 * What one answer may cost, whatever the service sends. The body is capped in bytes as it arrives
 * (`exchange.ts`); this caps what parsing it would build. JSON's cost is not its size: 16 MB of
 * `[{},{},…]` becomes 5.6 million objects and about half a gigabyte of heap, 16 MB of one long
 * string about 35 MB. So an answer too large to be cheap is counted before `JSON.parse` sees it.
 */

/**
 * Bodies up to this size are parsed without counting: even the worst shape of JSON built from
 * them stays within a few tens of MB, and every ordinary answer is far smaller (a page of 1,000
 * records is well under 1 MB), so the count costs the common case nothing.
 */
export const UNCOUNTED_BYTES = 1024 * 1024;

/**
 * An upper bound of the values `JSON.parse` would build from `text`: the objects and arrays it
 * opens plus the members and elements after the first (the commas), counted only until `limit` is
 * passed. Brackets and commas inside strings count too, so a text heavy with them counts high,
 * never low.
 */
export function jsonValueBound(text: string, limit: number): number {
  let count = 0;
  for (const mark of ['{', '[', ',']) {
    for (let at = text.indexOf(mark); at !== -1; at = text.indexOf(mark, at + 1)) {
      if (++count > limit) return count;
    }
  }
  return count;
}
