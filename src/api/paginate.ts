/**
 * Walking a limit/offset list to its end, and knowing whether what was read is the whole list.
 *
 * The service pages with limit/offset over a list that may change between two pages (a new run
 * pushes every run one place down). A walk checks, page by page, that `total` stays the same and
 * no id comes twice, and at the end that it read exactly `total` items. A walk whose last page is
 * full asks for one page more, which must be empty: a `total` short by whole pages (a service that
 * caps its count at 10,000, say) would otherwise end the walk early with every count agreeing. The same id twice within
 * one page is not a shift but the service's own list: the repeat is set aside (`quarantine.ts`). A walk that sees a shift
 * is thrown away and the list read again, a bounded number of times; after that the caller gets
 * an {@link ApiPaginationError}, never a partial list passed off as a complete one.
 *
 * A list the caller declares newest first (`newestFirst`) takes new items at its head, and a busy
 * service adds them while a long walk reads: such a walk would shift on every try and never end.
 * There, `total` grown by Δ between two pages, with exactly the next Δ items already read (each
 * pushed down Δ places), is no shift: nothing was skipped. The repeats are passed over and count
 * toward the last `total`; the new items are left to the next walk. A `total` that shrank, or any
 * other number of repeats, is a shift as in any list.
 *
 * Limits of what can be seen: one item removed above the read position and one added at the top
 * between two pages leave `total` and the count unchanged and repeat nothing; such a list reads
 * consistent but misses the added item (which the next collection sees). A list that moves
 * otherwise (an item added below the read position and one removed above it) may skip an item
 * while the counts still agree.
 */
import type { Logger } from 'pino';
import type { Page } from './schemas.js';
import { quarantined, type QuarantinedRecord, type QuarantineSink } from './quarantine.js';
import { ApiListTooLongError, ApiPaginationError, type PaginationShift } from './errors.js';

/**
 * A page read record by record (`CallOptions.quarantine`): the items that fit, and the ones set
 * aside. Both count as the list's items: a page of 200 with one set aside is a full page.
 */
export interface QuarantinedPage<T> extends Page<T> {
  quarantined?: QuarantinedRecord[];
  /**
   * The ids of the items the reader passed over unparsed (`CallOptions.passOver`): they too count
   * as the list's items, and are checked for repeats, but are not handed on.
   */
  passed?: number[];
}

/** One page of a walk as {@link pageStream} hands it on: its items, and how many it walked past. */
export interface WalkedPage<T> {
  items: T[];
  /** The page's items in the list, those set aside or passed over included. */
  walked: number;
}

/**
 * Reads one page: the items from `offset`, at most `limit` of them. `signal` ends the read early
 * (a page asked ahead that the walk no longer needs).
 */
export type PageFetcher<T> = (offset: number, limit: number, signal?: AbortSignal) => Promise<QuarantinedPage<T>>;

/** Options of {@link paginate}. */
export interface PaginateOptions<T> {
  /** Function name, for errors and logs. */
  fn: string;
  /**
   * `limit` asked for per page. The service may give fewer (a lower maximum): the first page's
   * length then sets the step of the walk, and every later page must fill it.
   */
  pageSize: number;
  /**
   * Early stop for newest-first lists: the walk ends at the first item for which this is true,
   * and that item and everything after it are left out (e.g. `run => run.created_at < since`).
   * The part read is still checked: same total on every page, no id twice.
   */
  until?: (item: T) => boolean;
  /**
   * Which items the caller wants: the others are still checked (counted, no id twice) but not
   * kept, so a long list read for a few of its items never holds the rest. Default: every item.
   */
  keep?: (item: T) => boolean;
  /**
   * The list is newest first and new items arrive at its head (`runs.list`, `backups.list`): a
   * `total` grown by as many items as the next page repeats at its head is no shift (see above).
   * Default false: any change of `total` is one.
   */
  newestFirst?: boolean;
  /**
   * Ask for the next page while the current one is still on its way (default false: one page after
   * another). The service prepares page n+1 while the client parses page n, which nearly halves a
   * long walk; a walk that stops early (`until`, a stream left, a failure) asked for at most that one
   * page more, and cancels it.
   */
  readAhead?: boolean;
  /**
   * The most items one walk reads before it fails with {@link ApiListTooLongError}; default no
   * bound. A list read whole (no `until`) whose `total` is already past it fails on its first page.
   */
  maxItems?: number;
  /**
   * Where the records the pages set aside are handed (`QuarantinedPage.quarantined`): by
   * {@link paginate} once its walk is complete (a walk thrown away hands nothing), by
   * {@link pageStream} page by page.
   */
  quarantine?: QuarantineSink;
  logger?: Logger;
}

/**
 * Ids as the bits of 32-bit words, by `id / 32`: each id a safe integer, as the schemas' `int()` and
 * the passed-over and quarantined ids are. Why not a `Set`: a walk of 85,000 backups grew a table of
 * 85,000 numbers, megabytes, each look-up in it a cache miss (~10% of the walk's CPU); ids numbered
 * as the list grows fill their words, a few thousand of them.
 */
class IdSet {
  readonly words = new Map<number, number>();

  has(id: number): boolean {
    return (((this.words.get(Math.floor(id / 32)) ?? 0) >>> (id & 31)) & 1) === 1;
  }

  /** Adds `id`, which is not in the set yet. */
  add(id: number): void {
    const key = Math.floor(id / 32);
    this.words.set(key, (this.words.get(key) ?? 0) | (1 << (id & 31)));
  }
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
 * One walk, page by page; `whole`: the list is read to its end (no early stop). Throws `ShiftSeen`
 * as soon as the list is seen to move. Yields each page's items (cut at the `until` item, after
 * which it ends) with how many it walked past. The first page gives `total` and the step; the
 * offsets of the other pages follow from them, so with `readAhead` the next one can be asked for
 * before the current one is answered. A page asked for ahead is always waited for before the
 * walk ends, so no request outlives it.
 */
async function* walk<T extends { id: number }>(
  fetch: PageFetcher<T>,
  options: PaginateOptions<T>,
  whole: boolean,
  setAside: (records: QuarantinedRecord[]) => void,
): AsyncGenerator<WalkedPage<T>> {
  // The ids read in the walk, and on the page being read; how many in all.
  const seen = new IdSet();
  let pageIds = new IdSet();
  let named = 0;
  // Records set aside without a readable id: counted, but never checked for repeats.
  let unnamed = 0;
  const first = await fetch(0, options.pageSize);
  // The last page's: newest first, it grows as items arrive at the head.
  let total = first.total;
  // Newest first: items that arrived since the walk began, and as many items read already that
  // the next pages must repeat at their head (`owed`); those repeated, counted toward `total`.
  let owed = 0;
  let repeated = 0;
  const step = first.items.length + (first.quarantined?.length ?? 0) + (first.passed?.length ?? 0);
  const maxItems = options.maxItems ?? Infinity;
  /**
   * Each id is read once in a walk: a repeat across pages means the list shifted under it. The same
   * id twice in one answer is no shift (a shift moves records between two reads), but the service's
   * own record, listed twice the same way at every walk. Set aside, it holds that record's alerts
   * and fails no walk; the list is read as usual.
   */
  const see = (id: number, offset: number): boolean => {
    if (pageIds.has(id)) {
      unnamed++;
      return false;
    }
    if (seen.has(id)) throw new ShiftSeen('id_repeated', `id ${id} came twice (page at offset ${offset})`);
    seen.add(id);
    pageIds.add(id);
    named++;
    return true;
  };
  /** How many of the first ids the walk read on an earlier page. */
  const readBefore = (ids: (number | undefined)[]) => {
    let n = 0;
    while (n < ids.length && seen.has(ids[n] ?? NaN)) n++;
    return n;
  };
  const twice = (item: unknown, id: number): QuarantinedRecord =>
    quarantined(options.fn, item, { reason: 'unreadable', detail: `id ${id} came twice in one page of the list` });
  /** The walk stops once it has read more than `maxItems`. */
  const withinBound = () => {
    const read = named + unnamed;
    if (read > maxItems) throw new ApiListTooLongError(options.fn, { maxItems, total, read });
  };
  if (step === 0 && total > 0) throw new ShiftSeen('short_page', `no items at offset 0 of ${total}`);
  // A list read whole would pass the bound anyway: say so now rather than after reading that much.
  if (whole && total > maxItems) throw new ApiListTooLongError(options.fn, { maxItems, total, read: 0 });
  // Pages asked for and not yet read, in order: the next one, and with `readAhead` the one after.
  const pending: { offset: number; page: Promise<QuarantinedPage<T>>; cancel: AbortController }[] = [];
  const depth = options.readAhead ? 2 : 1;
  let nextOffset = step;
  try {
    let current: { offset: number; page: QuarantinedPage<T> } | undefined = { offset: 0, page: first };
    while (current) {
      const { offset, page } = current;
      if (page.total !== total) {
        if (!options.newestFirst || page.total < total)
          throw new ShiftSeen('total_changed', `total went from ${total} to ${page.total} at offset ${offset}`);
        owed += page.total - total;
        total = page.total;
      }
      const expected = Math.min(step, total - offset);
      let aside = page.quarantined ?? [];
      let passed = page.passed ?? [];
      let items = page.items;
      const walked = items.length + aside.length + passed.length;
      if (walked < expected) {
        throw new ShiftSeen('short_page', `${walked} items at offset ${offset} of ${total}, expected ${expected}`);
      }
      if (owed > 0) {
        // The page's head is the items pushed down by the new ones: each part of the page (passed
        // over, set aside, kept) keeps the list's order, so its repeats come first in it.
        const due = Math.min(owed, walked);
        const heads = [readBefore(passed), readBefore(aside.map((r) => r.id)), readBefore(items.map((i) => i.id))];
        const head = heads[0]! + heads[1]! + heads[2]!;
        // Fewer: an item came below the read position, or one above it went. More: one moved down.
        if (head !== due)
          throw new ShiftSeen(
            head < due ? 'total_changed' : 'id_repeated',
            `total grew to ${total}: ${due} item(s) read before were due at offset ${offset}, ${head} came`,
          );
        [passed, aside, items] = [passed.slice(heads[0]), aside.slice(heads[1]), items.slice(heads[2])];
        owed -= due;
        repeated += due;
      }
      pageIds = new IdSet();
      for (const id of passed) if (!see(id, offset)) setAside([twice({ id }, id)]);
      withinBound();
      for (const record of aside) {
        if (record.id === undefined) unnamed++;
        else see(record.id, offset);
      }
      if (aside.length > 0) setAside(aside);
      const kept: T[] = [];
      for (const item of items) {
        if (!see(item.id, offset)) {
          setAside([twice(item, item.id)]);
          continue;
        }
        withinBound();
        if (options.until?.(item)) {
          if (kept.length > 0) yield { items: kept, walked };
          return;
        }
        kept.push(item);
      }
      if (walked > 0 || offset === 0) yield { items: kept, walked }; // not the empty page past `total`
      // Asked only now, after this page was handed on: a walk that stops here has read at most the one ahead.
      // Full pages up to `total`: one more, which must be empty, so a `total` short by pages misses none.
      const askPastTotal = step > 0 && (total > step || step === options.pageSize);
      while (pending.length < depth && (nextOffset < total || (nextOffset === total && askPastTotal))) {
        const cancel = new AbortController();
        const ahead = fetch(nextOffset, options.pageSize, cancel.signal);
        ahead.catch(() => undefined); // awaited below or settled in `finally`: never unhandled
        pending.push({ offset: nextOffset, page: ahead, cancel });
        nextOffset += step;
      }
      const next = pending.shift();
      current = next && { offset: next.offset, page: await next.page };
    }
    const read = named + unnamed + repeated;
    if (read !== total) throw new ShiftSeen('count_mismatch', `read ${read} items, total says ${total}`);
  } finally {
    // Left early: what is still on its way is not needed (and may be waiting out retries).
    for (const p of pending) p.cancel.abort();
    await Promise.allSettled(pending.map((p) => p.page));
  }
}

/** How many walks of a list that keeps shifting `paginate` makes before giving up. */
const MAX_WALKS = 3;

/**
 * Reads the complete list (or the part before `until`), restarting the walk when the list shifts,
 * up to {@link MAX_WALKS} walks; then throws {@link ApiPaginationError}. Errors of the page reads
 * themselves (refusals, timeouts) pass through unchanged.
 */
export async function paginate<T extends { id: number }>(
  fetch: PageFetcher<T>,
  options: PaginateOptions<T>,
): Promise<T[]> {
  let last: ShiftSeen | undefined;
  /** What each walk saw: one thing every time is a list that does not add up, not one that moves. */
  const seen = new Set<string>();
  for (let w = 1; w <= MAX_WALKS; w++) {
    const items: T[] = [];
    const aside: QuarantinedRecord[] = [];
    try {
      const { keep } = options;
      for await (const page of walk(fetch, options, !options.until, (records) => aside.push(...records))) {
        items.push(...(keep ? page.items.filter((item) => keep(item)) : page.items));
      }
      for (const record of aside) options.quarantine?.add(record);
      return items;
    } catch (err) {
      if (!(err instanceof ShiftSeen)) throw err;
      last = err;
      seen.add(`${err.shift}: ${err.detail}`);
      options.logger?.warn(
        { fn: options.fn, walk: w, shift: err.shift, detail: err.detail },
        'list shifted while paged; reading it again',
      );
    }
  }
  const { shift, detail } = last!;
  throw new ApiPaginationError(options.fn, { shift, walks: MAX_WALKS, detail, same: seen.size === 1 });
}

/**
 * The pages of one walk as they arrive, for callers that process a long list page by page.
 * Pages already handed out cannot be taken back, so a shift is not retried here: it ends the
 * iteration with an {@link ApiPaginationError} (walks: 1), and the caller discards what it got.
 */
export async function* pageStream<T extends { id: number }>(
  fetch: PageFetcher<T>,
  options: PaginateOptions<T>,
): AsyncGenerator<WalkedPage<T>> {
  try {
    // Its reader may stop early (a newest-first list read until what it needs is seen).
    yield* walk(fetch, options, false, (records) => {
      for (const record of records) options.quarantine?.add(record);
    });
  } catch (err) {
    if (err instanceof ShiftSeen)
      throw new ApiPaginationError(options.fn, { shift: err.shift, walks: 1, detail: err.detail });
    throw err;
  }
}
