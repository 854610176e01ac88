/**
 * `parsePage`: a list page parsed item by item gives exactly what `JSON.parse` of the whole body
 * gives (members in the same order), or nothing, so the client parses the body whole as before.
 * Pages of each shape it takes; bodies it must leave to the whole parse, valid JSON or not; and
 * 3,000 seeded corruptions of a page, none taken unless the whole parse reads it the same.
 */
import { describe, expect, it } from 'vitest';
import { parsePage } from '../../src/api/parse-page.js';
import { Prng } from '../../packages/simulator/src/prng.js';

/** What `JSON.parse` makes of `text`, written out (members in order), or `error`. */
function whole(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return 'error';
  }
}

const taken = (text: string) => parsePage(Buffer.from(text, 'utf8'));

const item = (id: number) => ({
  id,
  name: `app-${id} {not a bracket} [nor this], "quoted" \\ back`,
  state: 'running',
  labels: { team: 'blue', 'a,b': [1, 2.5e3, null, true] },
  notes: 'é ✓ 𝄞 日本',
});

describe('parsePage takes a page', () => {
  it.each([
    ['as JSON.stringify writes it', JSON.stringify({ data: { items: [item(1), item(2)], total: 2 } })],
    ['with total first', JSON.stringify({ data: { total: 7, items: [item(3)] } })],
    ['empty', '{"data":{"items":[],"total":0}}'],
    ['empty, spaced', '{ "data" : { "items" : [ ] , "total" : 0 } }'],
    ['pretty-printed', JSON.stringify({ data: { items: [item(4), item(5)], total: 12 } }, null, 2)],
    ['with tabs and CRLF', '\r\n\t{\t"data":\r\n{"items":\t[\r\n{"id":1}\t,\r\n{"id":2}\r\n]\t,"total":2}\r\n}\r\n'],
    ['of arrays', '{"data":{"items":[[1,"]"],[{"a":"}"}]],"total":2}}'],
    ['with a total in exponent form', '{"data":{"items":[{"id":1}],"total":1e2}}'],
    ['with escapes other than \\u', '{"data":{"items":[{"s":"a\\"b\\\\c\\/d\\n\\t"}],"total":1}}'],
    ['with a string ending in a backslash', '{"data":{"items":[{"s":"ends\\\\"},{"t":"x"}],"total":2}}'],
    ['with a key __proto__', '{"data":{"items":[{"__proto__":{"polluted":1},"id":1}],"total":1}}'],
  ])('%s, as the whole parse does', (_what, text) => {
    const page = taken(text);
    expect(page).toBeDefined();
    expect(JSON.stringify(page)).toBe(whole(text));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('parsePage leaves to the whole parse', () => {
  it.each([
    ['another member of data', '{"data":{"items":[],"total":0,"next":null}}'],
    ['another member of the answer', '{"data":{"items":[],"total":0},"meta":1}'],
    ['no total', '{"data":{"items":[{"id":1}]}}'],
    ['two totals', '{"data":{"total":1,"items":[{"id":1}],"total":2}}'],
    ['a scalar item', '{"data":{"items":[{"id":1},2],"total":2}}'],
    ['a string item', '{"data":{"items":["{}"],"total":1}}'],
    ['a trailing comma', '{"data":{"items":[{"id":1},],"total":1}}'],
    ['a leading comma', '{"data":{"items":[,{"id":1}],"total":1}}'],
    ['two commas', '{"data":{"items":[{"id":1},,{"id":2}],"total":2}}'],
    ['no comma between items', '{"data":{"items":[{"id":1} {"id":2}],"total":2}}'],
    ['a bracket of the wrong kind', '{"data":{"items":[{"id":1]],"total":1}}'],
    ['a bracket left open', '{"data":{"items":[{"a":[1}],"total":1}}'],
    ['a string left open', '{"data":{"items":[{"a":"x}],"total":1}}'],
    ['a cut body', '{"data":{"items":[{"id":1},{"id":'],
    ['a cut tail', '{"data":{"items":[{"id":1}],"total":1}'],
    ['text after it', '{"data":{"items":[],"total":0}}x'],
    ['a second answer after it', '{"data":{"items":[],"total":0}}{}'],
    ['a byte-order mark', '\uFEFF{"data":{"items":[],"total":0}}'],
    ['a key spelled in escapes', '{"d\\u0061ta":{"items":[],"total":0}}'],
    ['items that are not an array', '{"data":{"items":{},"total":0}}'],
    ['a total that is not a number', '{"data":{"items":[],"total":"0"}}'],
    ['a refusal', '{"error":{"code":"not_found","message":"no such app"}}'],
    ['one record', '{"data":{"id":1,"name":"a"}}'],
    ['no JSON at all', '<html>502 Bad Gateway</html>'],
    ['an empty body', ''],
  ])('%s', (_what, text) => {
    expect(taken(text)).toBeUndefined();
  });
});

describe('parsePage on bytes that are not UTF-8', () => {
  it.each([
    ['a lone continuation byte', [0x80]],
    ['a sequence cut before the closing quote', [0xe2, 0x82]],
    ['a byte never in UTF-8', [0xff, 0xfe]],
    ['an over-long encoding', [0xc0, 0xaf]],
  ])('reads %s in a string as the whole decode does (U+FFFD)', (_what, bad) => {
    const body = Buffer.concat([
      Buffer.from('{"data":{"items":[{"s":"a'),
      Buffer.from(bad),
      Buffer.from('"},{"t":"'),
      Buffer.from(bad),
      Buffer.from('"}],"total":2}}'),
    ]);
    const page = parsePage(body);
    expect(page).toBeDefined();
    expect(JSON.stringify(page)).toBe(whole(body.toString('utf8')));
  });
});

describe('parsePage on corrupted pages', () => {
  it('takes none that the whole parse refuses or reads otherwise (3,000 seeded corruptions)', () => {
    const page = JSON.stringify({ data: { items: [item(1), [item(2)], item(3)], total: 3 } });
    const marks = ['{', '}', '[', ']', ',', '"', ':', ' ', '\\', 'x', '1', '\n'];
    const random = new Prng(23);
    let stillTaken = 0;
    for (let i = 0; i < 3_000; i++) {
      let text = page;
      for (let k = random.int(1, 3); k > 0; k--) {
        const at = random.int(0, text.length - 1);
        const cut = random.int(0, 2);
        text = `${text.slice(0, at)}${random.chance(0.7) ? random.pick(marks) : ''}${text.slice(at + cut)}`;
      }
      // As bytes, as the client gets them (a surrogate cut in half is a bad byte sequence then).
      const bytes = Buffer.from(text, 'utf8');
      const parsed = parsePage(bytes);
      if (parsed === undefined) continue;
      stillTaken++;
      expect(JSON.stringify(parsed), text).toBe(whole(bytes.toString('utf8')));
    }
    // Corruptions inside strings keep the page valid: some are taken, and read as the whole parse reads them.
    expect(stillTaken).toBeGreaterThan(100);
  });
});

describe('parsePage passing records over', () => {
  const backup = (id: number, appId: unknown, extra: Record<string, unknown> = {}) => ({
    id,
    name: `b-${id} "app_id":${id}`,
    app_id: appId,
    offsite: [{ app_id: 1, storage: 's3' }],
    ...extra,
  });
  const pass = { key: 'app_id', when: (appId: number) => appId === 1 };
  const parse = (items: unknown[]) => parsePage(Buffer.from(JSON.stringify({ data: { items, total: 9 } })), pass);

  it('leaves out, unparsed, the items whose top-level key the reader passes over, and lists their ids', () => {
    const page = parse([backup(10, 1), backup(11, 2), backup(12, 1), backup(13, null)]);
    expect(page?.passed).toEqual([10, 12]);
    expect(page?.data.items).toEqual([backup(11, 2), backup(13, null)]);
    expect(page?.data.total).toBe(9);
  });

  it.each([
    ['the key only in a nested object', { id: 20, name: 'x', offsite: [{ app_id: 1 }] }],
    ['the key only inside a string', { id: 21, name: '"app_id":1' }],
    ['the key spelled with an escape', '{"id":22,"app\\u005fid":1}'],
    ['the key twice', '{"id":23,"app_id":1,"app_id":2}'],
    ['the id twice', '{"id":24,"id":25,"app_id":1}'],
    ['no id', { name: 'x', app_id: 1 }],
    ['an id that is a string', { id: '26', app_id: 1 }],
    ['a value with a fraction', '{"id":27,"app_id":1.0}'],
    ['a value in exponent form', '{"id":28,"app_id":1e0}'],
    ['a value with a leading zero', '{"id":29,"app_id":01}'],
    ['a value too long for a double', '{"id":30,"app_id":1000000000000000001}'],
  ])('parses an item with %s as any other', (_what, item) => {
    const text = `{"data":{"items":[${typeof item === 'string' ? item : JSON.stringify(item)}],"total":1}}`;
    const page = parsePage(Buffer.from(text), pass);
    // Either taken whole as JSON.parse reads it, or (bad JSON) left to the whole parse.
    if (page) {
      expect(page.passed).toBeUndefined();
      expect(JSON.stringify(page)).toBe(whole(text));
    } else expect(whole(text)).toBe('error');
  });

  it('reads keys and values through any JSON whitespace', () => {
    const page = parsePage(Buffer.from('{"data":{"items":[{ "id" :\n7 , "app_id"\t:\r1 }],"total":1}}'), pass);
    expect(page?.passed).toEqual([7]);
    expect(page?.data.items).toEqual([]);
  });

  it('passes over the same items as a whole parse would have the reader drop (2,000 seeded pages)', () => {
    const random = new Prng(41);
    for (let i = 0; i < 2_000; i++) {
      const items = Array.from({ length: random.int(0, 6) }, (_, k) =>
        random.chance(0.2) ? [k] : backup(k + 1, random.pick([1, 2, null, '1', 1.5])),
      );
      const text = JSON.stringify({ data: { items, total: items.length } }, null, random.chance(0.5) ? 1 : 0);
      const page = parsePage(Buffer.from(text), pass)!;
      const all = (JSON.parse(text) as { data: { items: unknown[] } }).data.items;
      const dropped = (x: unknown) => !Array.isArray(x) && (x as { app_id: unknown }).app_id === 1;
      expect(page.passed ?? []).toEqual(all.filter(dropped).map((x) => (x as { id: number }).id));
      expect(page.data.items).toEqual(all.filter((x) => !dropped(x)));
    }
  });
});
