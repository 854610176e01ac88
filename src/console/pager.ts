/**
 * One page of a console list: which rows (`?from=` the first row's index, `?size=` how many, at
 * most {@link MAX_PAGE_SIZE}), the rows rendered within a byte budget, and the line that says
 * where the page is ("Rows 101–200 of 1,234") with its Previous and Next links. Every list page
 * (alerts, silences, the remediation audit, an alert's timeline) goes through it, so no page grows
 * with the state: a page holds at most `size` rows and, whatever the records' text, about
 * {@link PAGE_BYTES} of them (each value is already cut, `html.ts`), the rest one click away.
 *
 *   const shown = pager(query, items, row, { path: '/x' });
 *   html`${shown.nav}${dataTable('x', headings, shown.rows, 'No x.')}`   // nav: nothing when there is no row
 */
import { html, type SafeHtml } from './html.js';
import { consolePath } from '../lib/console-paths.js';

/** Rows a page shows unless `?size=` says otherwise. */
export const DEFAULT_PAGE_SIZE = 100;
/** The most rows a page shows, whatever `?size=` asks. */
export const MAX_PAGE_SIZE = 500;
/**
 * The rendered rows a page holds at most (UTF-16 units): past it, the page ends early and its Next
 * link starts at the first row left out. One row is always shown, so every row can be reached.
 */
export const PAGE_BYTES = 1024 * 1024;

/** One page of a list. */
export interface ListPage<T> {
  /** The rows of this page, and each one's markup. */
  items: T[];
  rows: SafeHtml[];
  /** How many rows the whole list has. */
  total: number;
  /** "Rows 1–100 of 1,234 · Next ›", or nothing for an empty list. */
  nav: SafeHtml;
}

/**
 * The page the query asks for of `list`: the rows in memory, or their `total` and a `read(from,
 * size)` that reads those rows (from the store); `render` makes each one's markup. `path` and
 * `keep` rebuild the links with the page's other parameters (a grouping, a filter); `focus`, the
 * index of a row the page should hold when the query names no `from`.
 */
export function pager<T>(
  query: URLSearchParams,
  list: readonly T[] | { total: number; read: (from: number, size: number) => readonly T[] },
  render: (row: T) => SafeHtml,
  link: { path: string; keep?: Record<string, string | undefined>; focus?: number },
): ListPage<T> {
  const { total, read } = Array.isArray(list)
    ? { total: list.length, read: (from: number, size: number) => list.slice(from, from + size) }
    : (list as Exclude<typeof list, readonly T[]>);
  const size = clamp(query.get('size'), DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE);
  // A `from` past the end shows the last page rather than nothing; without one, the page holding
  // the row a link named (`focus`: a silence just made), else the first.
  const last = total === 0 ? 0 : Math.floor((total - 1) / size) * size;
  const start = link.focus === undefined || link.focus < 0 ? 0 : Math.floor(link.focus / size) * size;
  const asked = clamp(query.get('from'), start, 0, Number.MAX_SAFE_INTEGER);
  // Not rounded to the size: a page the byte budget ended early is followed from its first row left out.
  const from = asked >= total ? last : asked;
  const items: T[] = [];
  const rows: SafeHtml[] = [];
  let bytes = 0;
  for (const row of read(from, size)) {
    if (rows.length >= size) break;
    const markup = render(row);
    const length = String(markup).length;
    if (rows.length > 0 && bytes + length > PAGE_BYTES) break;
    items.push(row);
    rows.push(markup);
    bytes += length;
  }
  const shown = rows.length;
  const href = (at: number) =>
    consolePath(link.path, { ...link.keep, from: at === 0 ? undefined : String(at), size: sizeParam(size) });
  const previous = from > 0 ? html`<a rel="prev" href="${href(Math.max(0, from - size))}">‹ Previous</a>` : '';
  const next = from + shown < total ? html`<a rel="next" href="${href(from + shown)}">Next ›</a>` : '';
  const cut = shown < size && from + shown < total;
  const nav =
    total === 0
      ? html``
      : html`<p class="pager" data-from="${from}" data-shown="${shown}" data-total="${total}">
          Rows ${count(shown === 0 ? 0 : from + 1)}–${count(from + shown)} of ${count(total)}${
            cut ? html` <span class="muted">(this page reached its size in bytes)</span>` : ''
          }
          ${previous ? html` · ${previous}` : ''} ${next ? html` · ${next}` : ''}
        </p>`;
  return { items, rows, total, nav };
}

/** A query's whole number within bounds, or the default when absent or not a number. */
function clamp(text: string | null, fallback: number, min: number, max: number): number {
  const n = text === null || !/^\d{1,15}$/.test(text.trim()) ? fallback : Number(text.trim());
  return Math.min(max, Math.max(min, n));
}

/** The size in a link only when it is not the default, so links stay short. */
function sizeParam(size: number): string | undefined {
  return size === DEFAULT_PAGE_SIZE ? undefined : String(size);
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
