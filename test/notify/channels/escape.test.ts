import { describe, expect, it } from 'vitest';
import {
  cutText,
  escapeHtml,
  escapeHtmlLines,
  escapeMrkdwn,
  mrkdwnLink,
  oneLine,
  safeHttpUrl,
} from '../../../src/notify/channels/escape.js';

describe('escapeMrkdwn', () => {
  it.each([
    ['<!channel>', '&lt;!channel&gt;'],
    ['<!here>', '&lt;!here&gt;'],
    ['<@U123>', '&lt;@U123&gt;'],
    ['<https://evil|click>', '&lt;https://evil|click&gt;'],
    ['&amp;', '&amp;amp;'],
    ['a & b', 'a &amp; b'],
    ['*bold* _it_ `code`', '*bold* _it_ \u02cbcode\u02cb'],
  ])('%s → %s', (input, expected) => {
    expect(escapeMrkdwn(input)).toBe(expected);
  });

  it('cuts after escaping without splitting an entity', () => {
    const out = escapeMrkdwn('&&&&&&', 12);
    expect(out).toBe('&amp;&amp;…');
    expect(out.length).toBeLessThanOrEqual(12);
  });
});

describe('cutText', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly10!', 10, 'exactly10!'],
    ['eleven char', 10, 'eleven ch…'],
  ])('%s cut to %i → %s', (input, max, expected) => {
    expect(cutText(input, max)).toBe(expected);
  });

  it('never splits an emoji (surrogate pair)', () => {
    const out = cutText('🔴🔴🔴🔴', 5);
    expect(out).toBe('🔴🔴…');
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});

describe('oneLine', () => {
  it.each([
    ['shop\r\nBcc: victim@evil.example', 'shop Bcc: victim@evil.example'],
    ['a\nb', 'a b'],
    ['tab\there', 'tab here'],
    ['nul\u0000x', 'nul x'],
    ['nel\u0085x', 'nel x'],
    ['ls\u2028x', 'ls x'],
    ['  trimmed \r\n', 'trimmed'],
  ])('%j → %j', (input, expected) => {
    expect(oneLine(input)).toBe(expected);
  });
});

describe('safeHttpUrl', () => {
  it.each([
    ['https://shop.example.com/', 'https://shop.example.com/'],
    ['http://shop.example.com/a b', 'http://shop.example.com/a%20b'],
    ['https://shop.example.com/a|b', 'https://shop.example.com/a%7Cb'],
    ['https://shop.example.com/<!channel>', 'https://shop.example.com/%3C!channel%3E'],
    ['javascript:alert(1)', null],
    ['mailto:x@example.com', null],
    ['/relative', null],
    ['https://evil|click', null],
    ['https://user:pw@shop.example.com/', null],
    [null, null],
  ])('%s → %s', (input, expected) => {
    expect(safeHttpUrl(input)).toBe(expected);
  });
});

describe('mrkdwnLink', () => {
  it('links a safe URL with an escaped label', () => {
    expect(mrkdwnLink('https://shop.example.com/?a=1&b=2', '<!here>')).toBe(
      '<https://shop.example.com/?a=1&amp;b=2|&lt;!here&gt;>',
    );
  });
  it('shows only the escaped label when the URL is unsafe', () => {
    expect(mrkdwnLink('javascript:alert(1)', 'shop')).toBe('shop');
  });
});

describe('escapeHtml', () => {
  it('escapes the five HTML characters', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('text that reorders, hides or breaks lines, in every medium', () => {
  const rlo = 'shop\u202Egnp.exe';
  const zwsp = 'sh\u200Bop';
  it.each<[string, (text: string) => string]>([
    ['escapeMrkdwn', (t) => escapeMrkdwn(t)],
    ['escapeHtml', (t) => escapeHtml(t)],
    ['oneLine', (t) => oneLine(t)],
    ['cutText', (t) => cutText(t, 100)],
    ['mrkdwnLink (its label)', (t) => mrkdwnLink('https://shop.example.com/', t)],
  ])('%s writes out bidi and zero-width characters instead of obeying them', (_name, escape) => {
    expect(escape(rlo)).toContain('shop\\u{202e}gnp.exe');
    expect(escape(zwsp)).toContain('sh\\u{200b}op');
    expect(escape(`${rlo} ${zwsp} a\u2066b\u2069 \uFEFF`)).not.toMatch(
      /[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]/,
    );
  });

  it.each([
    ['a newline', 'Update failed\nBcc: x', 'Update failed Bcc: x'],
    ['CR LF twice', 'a\r\n\r\nb', 'a b'],
    ['a line separator', 'a\u2028b', 'a b'],
    ['a tab and NUL', 'a\t\u0000b', 'a b'],
  ])('escapeMrkdwn and escapeHtml keep %s out of a one-line layout', (_name, input, line) => {
    expect(escapeMrkdwn(input)).toBe(line);
    expect(escapeHtml(input)).toBe(line);
  });

  it('never cuts a written-out character in half', () => {
    const out = escapeMrkdwn('ab\u202Ecd', 8);
    expect(out).toBe('ab…');
    expect(escapeMrkdwn('ab\u202Ecd', 11)).toBe('ab\\u{202e}…');
  });

  it('cutText keeps our own line breaks (it cuts multi-line mrkdwn built from escaped lines)', () => {
    expect(cutText('line one\nline two', 100)).toBe('line one\nline two');
  });
});

describe('escapeHtmlLines (a textarea, a pre: where lines are lines)', () => {
  it.each([
    ['keeps line feeds, and turns CR LF into one', 'check=x\r\napp=<b>', 'check=x\napp=&lt;b&gt;'],
    ['turns every other control run into a space', 'a\u0000\tb\u2028c', 'a b c'],
  ])('%s', (_what, text, expected) => {
    expect(escapeHtmlLines(text)).toBe(expected);
  });
});

describe('escaping in runs', () => {
  /** The escaping code point by code point, as it was before runs: the reference the runs must match. */
  function reference(text: string, max: number, map: Record<string, string>): string {
    let out = '';
    for (let i = 0; i < text.length;) {
      const c = String.fromCodePoint(text.codePointAt(i)!);
      i += c.length;
      const piece =
        map[c] ??
        (/[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/.test(c)
          ? `\\u{${c.codePointAt(0)!.toString(16)}}`
          : // Half a surrogate pair: U+FFFD.
            c.length === 1 && /[\ud800-\udfff]/.test(c)
            ? '\ufffd'
            : c);
      if (out.length + piece.length > (i >= text.length ? max : max - 1)) return `${out}…`;
      out += piece;
    }
    return out;
  }
  const HTML = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  const PIECES = ['a', 'bc', 'plain text ', '&', '<', '"', "'", '\u202e', '\u200b', '😀', 'é', '\ud800'];

  it('cuts and escapes exactly as one code point at a time would, for every cut', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 300; n++) {
      const text = Array.from(
        { length: Math.floor(next() * 12) },
        () => PIECES[Math.floor(next() * PIECES.length)],
      ).join('');
      for (const max of [0, 1, 2, 3, 5, 8, 13, 40, Infinity]) {
        expect(escapeHtml(text, max), JSON.stringify([text, max])).toBe(reference(text, max, HTML));
        expect(cutText(text, max), JSON.stringify([text, max])).toBe(reference(text, max, {}));
      }
    }
  });

  it('reads a text of megabytes only as far as its cut', () => {
    const huge = `${'x'.repeat(7 * 1024 * 1024)}<`;
    expect(escapeHtml(huge, 100)).toBe(`${'x'.repeat(99)}…`);
    expect(escapeHtml(`${'<'.repeat(10)}${huge}`, 45)).toBe(`${'&lt;'.repeat(10)}${'x'.repeat(4)}…`);
  });
});
