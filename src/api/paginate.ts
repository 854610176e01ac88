/**
 * Walking a limit/offset list to its end, and knowing whether what was read is the whole list.
 *
 * The service pages with limit/offset over a list that may change between two pages (a new run
 * pushes every run one place down). A walk checks, page by page, that `total` stays the same and
 * no id comes twice, and at the end that it read exactly `total` items. A walk that sees a shift
 * is thrown away and the list read again, a bounded number of times; after that the caller gets
 * an {@link ApiPaginationError}, never a partial list passed off as a complete one.
 *
 * Limits of what can be seen: one item removed above the read position and one added at the top
 * between two pages leave `total` and the count unchanged and repeat nothing; such a list reads
 * consistent but misses the added item (which the next collection sees).
 */
import type { Logger } from 'pino';
import type { Page } from './schemas.js';
import { ApiPaginationError, type PaginationShift } from './errors.js';

/** Reads one page: the items from `offset`, at most `limit` of them. */
export type PageFetcher<T> = (offset: number, limit: number) => Promise<Page<T>>;

/** Options of {@link paginate}. */
export interface PaginateOptions<T> {
  /** Function name, for errors and logs. */
  fn: string;
  /** `limit` asked for per page; the service may give fewer (a lower maximum), the walk follows. */
  pageSize: number;
  /**
   * Early stop for newest-first lists: the walk ends at the first item for which this is true,
   * and that item and everything after it are left out (e.g. `run => run.created_at < since`).
   * The part read is still checked: same total on every page, no id twice.
   */
  until?: (item: T) => boolean;
  /** How many walks before giving up; default 3. */
  maxWalks?: number;
  logger?: Logger;
}

/** A shift seen during one walk (internal: becomes a restart or an ApiPaginationError). */
class ShiftSeen extends Error {
  constructor(
    readonly shift: PaginationShift,
    readonly detail: string,
  ) {
    super(`${shift}: ${detail}`);
  }
}

/**
 * One walk, page by page. Throws `ShiftSeen` as soon as the list is seen to move. Yields each page's
 * items (cut at the `until` item, after which it ends).
 */
async function* walk<T extends { id: number }>(fetch: PageFetcher<T>, options: PaginateOptions<T>): AsyncGenerator<T[]> {
  const seen = new Set<number>();
  let total: number | undefined;
  let offset = 0;
  for (;;) {
    const page = await fetch(offset, options.pageSize);
    if (total === undefined) total = page.total;
    else if (page.total !== total) throw new ShiftSeen('total_changed', `total went from ${total} to ${page.total} at offset ${offset}`);
    if (page.items.length === 0) {
      if (offset < total) throw new ShiftSeen('short_page', `no items at offset ${offset} of ${total}`);
      break;
    }
    const kept: T[] = [];
    for (const item of page.items) {
      if (seen.has(item.id)) throw new ShiftSeen('id_repeated', `id ${item.id} came twice (page at offset ${offset})`);
      seen.add(item.id);
      if (options.until?.(item)) {
        if (kept.length > 0) yield kept;
        return;
      }
      kept.push(item);
    }
    yield kept;
    offset += page.items.length;
    if (offset >= total) break;
  }
  if (seen.size !== total) throw new ShiftSeen('count_mismatch', `read ${seen.size} items, total says ${total}`);
}

/**
 * Reads the complete list (or the part before `until`), restarting the walk when the list shifts,
 * up to `maxWalks` walks; then throws {@link ApiPaginationError}. Errors of the page reads
 * themselves (refusals, timeouts) pass through unchanged.
 */
export async function paginate<T extends { id: number }>(fetch: PageFetcher<T>, options: PaginateOptions<T>): Promise<T[]> {
  const maxWalks = options.maxWalks ?? 3;
  let last: ShiftSeen | undefined;
  for (let w = 1; w <= maxWalks; w++) {
    const items: T[] = [];
    try {
      for await (const page of walk(fetch, options)) items.push(...page);
      return items;
    } catch (err) {
      if (!(err instanceof ShiftSeen)) throw err;
      last = err;
      options.logger?.warn({ fn: options.fn, walk: w, shift: err.shift, detail: err.detail }, 'list shifted while paged; reading it again');
    }
  }
  throw new ApiPaginationError(options.fn, { shift: last!.shift, walks: maxWalks, detail: last!.detail });
}

/**
 * The pages of one walk as they arrive, for callers that process a long list page by page.
 * Pages already handed out cannot be taken back, so a shift is not retried here: it ends the
 * iteration with an {@link ApiPaginationError} (walks: 1), and the caller discards what it got.
 */
export async function* pageStream<T extends { id: number }>(fetch: PageFetcher<T>, options: PaginateOptions<T>): AsyncGenerator<T[]> {
  try {
    yield* walk(fetch, options);
  } catch (err) {
    if (err instanceof ShiftSeen) throw new ApiPaginationError(options.fn, { shift: err.shift, walks: 1, detail: err.detail });
    throw err;
  }
}
