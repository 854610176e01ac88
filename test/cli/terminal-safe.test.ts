/** Text from the service reaches a terminal as text: escape sequences, line breaks and bidi controls shown, not obeyed. */
import { describe, expect, it } from 'vitest';
import { table, terminalJson, terminalSafe } from '../../src/cli/cli-helpers.js';

describe('terminal output of service text', () => {
  it.each([
    ['an escape sequence that recolours', 'shop\u001b[31mRED\u001b[0m', 'shop\\u{1b}[31mRED\\u{1b}[0m'],
    ['one that sets the window title', 'x\u001b]0;pwned\u0007y', 'x\\u{1b}]0;pwned\\u{7}y'],
    ['a C1 control sequence introducer', 'a\u009b31mb', 'a\\u{9b}31mb'],
    ['a line break that would split the row', 'rm -rf x\nserver=prod', 'rm -rf x\\u{a}server=prod'],
    ['a right-to-left override', 'abc\u202Edcba', 'abc\\u{202e}dcba'],
    ['a zero-width space', 'sh\u200Bop', 'sh\\u{200b}op'],
    ['plain text, untouched', 'shop-prod (production) · 3h', 'shop-prod (production) · 3h'],
  ])('%s', (_what, text, shown) => {
    expect(terminalSafe(text)).toBe(shown);
    expect(table([['APP'], [text]])).toBe(`APP\n${shown}\n`);
  });

  it('JSON for a terminal reads back as the same data, with nothing left for the terminal to obey', () => {
    const value = { app: 'a\u009bb\u202Ec\u001b[0m', n: 1 };
    const out = terminalJson(value);
    expect(JSON.parse(out)).toEqual(value);
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  });
});
