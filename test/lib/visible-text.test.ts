/** Characters that reorder or hide text are written out, in messages and on the terminal alike. */
import { describe, expect, it } from 'vitest';
import { visibleText } from '../../src/lib/visible-text.js';

describe('visibleText', () => {
  it.each([
    ['a right-to-left override', 'shop\u202Egnp.exe', 'shop\\u{202e}gnp.exe'],
    ['a right-to-left isolate and its end', 'a\u2067b\u2069c', 'a\\u{2067}b\\u{2069}c'],
    ['left-to-right and right-to-left marks', '\u200Eshop\u200F', '\\u{200e}shop\\u{200f}'],
    ['the Arabic letter mark', 'x\u061Cy', 'x\\u{61c}y'],
    ['a zero-width space', 'sh\u200Bop', 'sh\\u{200b}op'],
    ['a zero-width joiner', 'sh\u200Dop', 'sh\\u{200d}op'],
    ['a word joiner', 'sh\u2060op', 'sh\\u{2060}op'],
    ['a byte order mark', '\uFEFFshop', '\\u{feff}shop'],
    ['plain text and emoji, untouched', 'shop-prod (production) · 3h 🔴', 'shop-prod (production) · 3h 🔴'],
    ['right-to-left script itself, untouched', 'متجر', 'متجر'],
  ])('%s', (_what, text, shown) => {
    expect(visibleText(text)).toBe(shown);
    expect(visibleText(text, { controls: true })).toBe(shown);
  });

  it('leaves control characters to the medium unless told, then writes them out too', () => {
    expect(visibleText('a\nb\u001b[0m\u009b')).toBe('a\nb\u001b[0m\u009b');
    expect(visibleText('a\nb\u001b[0m\u009b', { controls: true })).toBe('a\\u{a}b\\u{1b}[0m\\u{9b}');
  });
});
