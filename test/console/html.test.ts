import { describe, expect, it } from 'vitest';
import { html, safeLink, SafeHtml } from '../../src/console/html.js';

describe('html', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['" onmouseover="alert(1)', '&quot; onmouseover=&quot;alert(1)'],
    ["' autofocus onfocus='alert(1)", '&#39; autofocus onfocus=&#39;alert(1)'],
    ['a & b', 'a &amp; b'],
    ['<img src=x onerror=alert(1)>', '&lt;img src=x onerror=alert(1)&gt;'],
    ['&lt;already&gt;', '&amp;lt;already&amp;gt;'],
  ])('keeps hostile text as text: %s', (text, escaped) => {
    expect(String(html`<td title="${text}">${text}</td>`)).toBe(`<td title="${escaped}">${escaped}</td>`);
  });

  it('keeps nested templates and lists as markup, and drops nothing values', () => {
    const items = ['<b>', 'x'];
    const out = html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>${null}${undefined}${false}${0}`;
    expect(String(out)).toBe('<ul><li>&lt;b&gt;</li><li>x</li></ul>0');
  });

  it('cannot be fooled by a value that looks like markup', () => {
    const forged = { toString: () => '<script>alert(1)</script>' } as unknown as string;
    expect(String(html`${forged}`)).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(() => new SafeHtml(Symbol('html') as never, '<script>')).toThrow(TypeError);
  });
});

describe('safeLink', () => {
  it.each([
    [
      'https://shop.example.com/a?b=1&c=2',
      '<a href="https://shop.example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">open</a>',
    ],
    ['javascript:alert(1)', '<span class="url">javascript:alert(1)</span>'],
    [
      'data:text/html,<script>alert(1)</script>',
      '<span class="url">data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;</span>',
    ],
    ['https://user:pw@example.com/', '<span class="url">https://user:pw@example.com/</span>'],
    [
      'https://x.example/"onmouseover="alert(1)',
      '<a href="https://x.example/%22onmouseover=%22alert(1)" rel="noopener noreferrer nofollow" target="_blank">open</a>',
    ],
    [null, '<span class="url"></span>'],
  ])('%s', (url, out) => {
    expect(String(safeLink(url, 'open'))).toBe(out);
  });
});
