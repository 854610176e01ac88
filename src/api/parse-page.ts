/**
 * A list page's body parsed item by item, without ever making the whole body one string.
 *
 * Why: a page of 1,000 records is 0.3-0.5 MB of JSON. As one string it is too large for V8's
 * ordinary heap pages, so each became a large object with memory of its own, mapped for it, faulted
 * in 4 kB at a time and unmapped after: at 10,000 apps ~130 such pages a cycle, ~60 MB. Parsed as
 * one short string per item they stay in the young generation, which reuses its memory. Measured
 * on the pages of a 10,000-app cycle (52 MB, under load): 470 ms of CPU per round as whole
 * strings, 310 ms item by item (the scan for the items' bounds ~95 ms of it).
 *
 * The result is exactly what `JSON.parse` of the whole body gives, or nothing: only a body of the
 * shape `{"data":{"items":[…],"total":N}}` (`total` before or after `items`, any JSON whitespace)
 * whose items are each an object or an array is taken; every item is parsed by `JSON.parse` on its
 * own text, and between them only whitespace and one comma are allowed. Anything else (another
 * member, a scalar item, a byte-order mark, a text that is not JSON at all) gets `undefined`, and
 * the caller parses the body whole, as before, with the errors it names.
 *
 * A reader that needs only some records may say which it will drop unread ({@link PassOver}): an
 * item whose own `id` and whose member `key` are plain integers, and whose `key` the reader passes
 * over, is not parsed at all; only its id is handed on (`passed`), for the walk to count it and see
 * that no id comes twice. At 10,000 apps the backups walk drops more than half of the 84,000
 * backups it meets (apps already judged): they were most of its parsing and its garbage.
 */

/** JSON's whitespace, and a number as JSON writes it. */
const WS = '[ \\t\\n\\r]*';
const NUMBER = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?';
/** `{"data":{` then `"total":N,` or nothing, then `"items":[`. */
const HEAD = new RegExp(
  `^${WS}\\{${WS}"data"${WS}:${WS}\\{${WS}(?:"total"${WS}:${WS}(${NUMBER})${WS},${WS})?"items"${WS}:${WS}\\[`,
);
/** After the items' `]`: `,"total":N` or nothing, then `}}`. */
const TAIL = new RegExp(`^${WS}(?:,${WS}"total"${WS}:${WS}(${NUMBER})${WS})?\\}${WS}\\}${WS}$`);
/** The head is looked for in the body's first bytes: room for any whitespace an honest service puts there. */
const HEAD_BYTES = 256;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** A page's answer as `JSON.parse` makes it, less the items passed over. */
export interface ParsedPage {
  data: { items: unknown[]; total: number };
  /** The ids of the items passed over unparsed ({@link PassOver}), in the page's order. */
  passed?: number[];
}

/**
 * Which records of a list the reader drops unread: those whose top-level member `key` is an
 * integer for which `when` is true. Only a page parsed item by item honours it; a page parsed whole
 * hands every record on, and the reader drops them itself.
 */
export interface PassOver {
  key: string;
  when: (value: number) => boolean;
}

/** The parsed page `{ data: { items, total } }`, or undefined when the body is not of that shape. */
export function parsePage(body: Buffer, pass?: PassOver): ParsedPage | undefined {
  const head = HEAD.exec(body.toString('latin1', 0, HEAD_BYTES));
  if (!head) return undefined;
  const items: unknown[] = [];
  const passed: number[] = [];
  const passKey = pass && Buffer.from(JSON.stringify(pass.key), 'utf8');
  const end = body.length;
  let at = skipSpace(body, head[0].length);
  if (body[at] !== CLOSE_BRACKET) {
    for (;;) {
      const first = body[at];
      if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return undefined;
      const after = itemEnd(body, at, first === OPEN_BRACE ? passKey : undefined);
      if (after < 0) return undefined;
      const id = passKey && first === OPEN_BRACE ? passedId(pass!.when) : undefined;
      if (id !== undefined) passed.push(id);
      else
        try {
          items.push(JSON.parse(body.toString('utf8', at, after)));
        } catch {
          return undefined;
        }
      at = skipSpace(body, after);
      if (body[at] === CLOSE_BRACKET) break;
      if (body[at] !== COMMA) return undefined;
      at = skipSpace(body, at + 1);
      if (at >= end) return undefined;
    }
  }
  const tail = TAIL.exec(body.toString('latin1', at + 1, end));
  // Exactly one `total`: two would be a duplicate key, which the whole parse settles its own way.
  if (!tail || (head[1] === undefined) === (tail[1] === undefined)) return undefined;
  const total = Number(head[1] ?? tail[1]);
  // Members in the body's order, as `JSON.parse` would make them.
  const data = head[1] === undefined ? { items, total } : ({ total, items } as { items: unknown[]; total: number });
  return passed.length > 0 ? { data, passed } : { data };
}

const ID_KEY = Buffer.from('"id"', 'utf8');
const COLON = 0x3a;
const MINUS = 0x2d;

/** What {@link itemEnd} found of the item's top-level `id` and passing key: NaN none, -1 unusable. */
let foundId = NaN;
let foundValue = NaN;

/**
 * Where the object or array opening at `start` ends (the index after its last byte), counting
 * brackets outside strings; -1 when the body ends first. Brackets of the wrong kind are not told
 * apart here: `JSON.parse` of the item's text refuses them. With `key`, the same pass notes the
 * item's top-level `id` and `key` members in {@link foundId} and {@link foundValue} (see
 * {@link passedId}): a member's name is a string at depth 1 followed by a colon.
 */
function itemEnd(body: Buffer, start: number, key?: Buffer): number {
  const end = body.length;
  let depth = 0;
  foundId = NaN;
  foundValue = NaN;
  for (let at = start; at < end; at++) {
    const c = body[at]!;
    if (c === QUOTE) {
      const from = at;
      // To the string's closing quote: a backslash escapes the byte after it.
      for (at++; at < end; at++) {
        const s = body[at];
        if (s === BACKSLASH) at++;
        else if (s === QUOTE) break;
      }
      if (key === undefined || depth !== 1) continue;
      const length = at + 1 - from;
      const isId = length === ID_KEY.length && sameBytes(body, from, ID_KEY);
      if (!isId && !(length === key.length && sameBytes(body, from, key))) continue;
      const colon = skipSpace(body, at + 1);
      if (body[colon] !== COLON) continue;
      // A second one, or one not written plainly, makes the item unusable for passing: -1.
      const number = plainInteger(body, skipSpace(body, colon + 1), end) ?? -1;
      if (isId) foundId = Number.isNaN(foundId) ? number : -1;
      else foundValue = Number.isNaN(foundValue) ? number : -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return at + 1;
    }
  }
  return -1;
}

/** Whether `body` holds the bytes of `word` at `at`. */
function sameBytes(body: Buffer, at: number, word: Buffer): boolean {
  for (let i = 0; i < word.length; i++) if (body[at + i] !== word[i]) return false;
  return true;
}

/**
 * The id of the object item {@link itemEnd} just scanned when it is passed over: its top-level
 * `id` and passing key are each there once, as plain integers, and `when` is true of the key's
 * value. Otherwise undefined, and the item is parsed as any other (`JSON.parse` settles all the
 * rest: keys spelled with escapes, duplicate keys, numbers written otherwise, bad JSON).
 */
function passedId(when: (value: number) => boolean): number | undefined {
  return foundId >= 0 && foundValue >= 0 && when(foundValue) ? foundId : undefined;
}

/** The integer written plainly at `at` (digits, maybe a minus, then `,` `}` or space), or undefined. */
function plainInteger(body: Buffer, at: number, end: number): number | undefined {
  let i = body[at] === MINUS ? at + 1 : at;
  const digits = i;
  let value = 0; // read digit by digit: no string made per key
  for (; i < end && body[i]! >= 0x30 && body[i]! <= 0x39; i++) value = value * 10 + body[i]! - 0x30;
  // No digits, a leading zero (not JSON), or too many for an exact double: left to JSON.parse.
  if (i === digits || i - digits > 15 || (body[digits] === 0x30 && i - digits > 1)) return undefined;
  const after = body[skipSpace(body, i)];
  if (after !== COMMA && after !== CLOSE_BRACE) return undefined;
  return digits > at ? -value : value;
}

function skipSpace(body: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const c = body[at];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return at;
    at++;
  }
}
