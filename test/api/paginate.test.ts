import { describe, expect, it } from 'vitest';
import { paginate, pageStream, type PageFetcher } from '../../src/api/paginate.js';
import { ApiPaginationError, type PaginationShift } from '../../src/api/errors.js';
import { Quarantine } from '../../src/api/quarantine.js';
import type { Page } from '../../src/api/schemas.js';

// These tests drive the walk with in-memory lists (no HTTP): the walk's consistency rules are pure
// logic over pages. The HTTP side is covered against the simulator in client-*.test.ts.

interface Item {
  id: number;
}

/** A newest-first list held in memory, with a hook run before each page is answered. */
function memoryList(
  count: number,
  opts: { maxLimit?: number; beforePage?: (call: number, list: Item[], offset: number) => void } = {},
) {
  const list: Item[] = Array.from({ length: count }, (_, i) => ({ id: count - i }));
  const calls: { offset: number; limit: number }[] = [];
  const fetch: PageFetcher<Item> = async (offset, limit) => {
    calls.push({ offset, limit });
    opts.beforePage?.(calls.length, list, offset);
    const n = Math.min(limit, opts.maxLimit ?? Infinity);
    return { items: list.slice(offset, offset + n), total: list.length };
  };
  return { list, calls, fetch };
}

describe('paginate', () => {
  it('walks limit/offset to total and returns every item once', async () => {
    const m = memoryList(450);
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 200 });
    expect(items.map((i) => i.id)).toEqual(m.list.map((i) => i.id));
    expect(m.calls).toEqual([
      { offset: 0, limit: 200 },
      { offset: 200, limit: 200 },
      { offset: 400, limit: 200 },
    ]);
  });

  it('follows a service that gives fewer items than asked (a lower maximum limit)', async () => {
    const m = memoryList(250, { maxLimit: 100 });
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 200 });
    expect(items).toHaveLength(250);
    expect(m.calls.map((c) => c.offset)).toEqual([0, 100, 200]);
  });

  it('asks past a total that ends on a full page, so a total short by a page misses nothing', async () => {
    const m = memoryList(250);
    const short = async (offset: number, limit: number) => ({ ...(await m.fetch(offset, limit)), total: 200 });
    const error = await paginate(short, { fn: 'urls.list', pageSize: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiPaginationError);
    expect((error as ApiPaginationError).message).toMatch(
      /^urls\.list: the list does not add up, the same on all 3 walks \(the service's total or pages are off, not a list that changed\): count_mismatch: read 250 items, total says 200$/,
    );
    // A true total on a full page costs that one empty page; a list in one short page costs none.
    const exact = memoryList(200);
    expect(await paginate(exact.fetch, { fn: 'urls.list', pageSize: 100 })).toHaveLength(200);
    expect(exact.calls.map((c) => c.offset)).toEqual([0, 100, 200]);
    const small = memoryList(40);
    expect(await paginate(small.fetch, { fn: 'urls.list', pageSize: 100 })).toHaveLength(40);
    expect(small.calls).toHaveLength(1);
  });

  it('returns an empty list for an empty answer', async () => {
    const m = memoryList(0);
    expect(await paginate(m.fetch, { fn: 'runs.list', pageSize: 50 })).toEqual([]);
  });

  it('reads the list again when it shifted during the first walk, and returns the consistent second walk', async () => {
    // A new run appears at the top while page 2 is being asked for, during the first walk only.
    const m = memoryList(120, { beforePage: (call, list) => call === 2 && list.unshift({ id: 1000 }) });
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50 });
    expect(items).toHaveLength(121);
    expect(new Set(items.map((i) => i.id)).size).toBe(121);
    expect(items[0]!.id).toBe(1000);
  });

  type Case = { name: string; shift: PaginationShift; fetch: PageFetcher<Item> };
  const cases: Case[] = [
    {
      name: 'total moves on every walk',
      shift: 'total_changed',
      fetch: (() => {
        let n = 100;
        return async (offset: number, limit: number): Promise<Page<Item>> => {
          n++;
          return {
            items: Array.from({ length: Math.min(limit, n - offset) }, (_, i) => ({ id: n - offset - i })),
            total: n,
          };
        };
      })(),
    },
    {
      name: 'an item moves down a page with the total unchanged',
      shift: 'id_repeated',
      fetch: async (offset) => ({ items: offset === 0 ? [{ id: 3 }, { id: 2 }] : [{ id: 2 }, { id: 1 }], total: 4 }),
    },
    {
      name: 'the list ends before total',
      shift: 'short_page',
      fetch: async (offset) => ({ items: offset === 0 ? [{ id: 3 }, { id: 2 }] : [], total: 5 }),
    },
    {
      name: 'more items than total',
      shift: 'count_mismatch',
      fetch: async () => ({ items: [{ id: 3 }, { id: 2 }, { id: 1 }], total: 2 }),
    },
  ];

  it.each(
    cases.flatMap((c) => [
      { ...c, readAhead: false },
      { ...c, readAhead: true },
    ]),
  )(
    'gives up with ApiPaginationError ($shift) after 3 walks when $name (readAhead $readAhead)',
    async ({ shift, fetch, readAhead }) => {
      const err = await paginate(fetch, { fn: 'runs.list', pageSize: 2, readAhead }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiPaginationError);
      expect(err).toMatchObject({ fn: 'runs.list', shift, walks: 3 });
      expect((err as Error).message).toContain('runs.list');
    },
  );

  it('stops early at the first item that satisfies `until`, leaving it out, and reads no further page', async () => {
    const m = memoryList(1000);
    // Newest first: ids 1000, 999, … Stop at the first id below 880.
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, until: (i) => i.id < 880 });
    expect(items.map((i) => i.id)).toEqual(Array.from({ length: 121 }, (_, i) => 1000 - i));
    expect(m.calls).toHaveLength(3);
  });

  it('sets aside an id that comes twice in one page: no shift, one walk, the rest of the list read', async () => {
    // The service lists record 140 twice on its second page (offsets 50-99), the same at every walk.
    const m = memoryList(190);
    m.list[60] = { id: 140 };
    const quarantine = new Quarantine();
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, quarantine });
    expect(m.calls).toHaveLength(4);
    expect(items).toHaveLength(189);
    expect(quarantine.records()).toEqual([
      expect.objectContaining({ kind: 'run', id: 140, reason: 'unreadable', subjects: [{ type: 'run', id: 140 }] }),
    ]);
  });

  it.each([
    ['falling', (i: number) => 1000 - i],
    ['rising', (i: number) => i + 1],
    ['in no order', (i: number) => (i * 37) % 101],
    ['far apart', (i: number) => (i % 2 ? 2 ** 52 : 0) + i],
  ])('tells repeats apart in a list whose ids are %s', async (_order, idAt) => {
    // 100 items: the id at index 7 comes again at 20 (one page) and at 70 (a later page).
    const ids = Array.from({ length: 100 }, (_, i) => idAt(i));
    const read = (list: number[]) => async (offset: number, limit: number) => ({
      items: list.slice(offset, offset + limit).map((id) => ({ id })),
      total: list.length,
    });
    const quarantine = new Quarantine();
    const inPage = ids.map((id, i) => (i === 20 ? ids[7]! : id));
    const items = await paginate(read(inPage), { fn: 'runs.list', pageSize: 50, quarantine });
    expect(items.map((i) => i.id)).toEqual(inPage.filter((_, i) => i !== 20));
    expect(quarantine.records()).toEqual([expect.objectContaining({ id: ids[7] })]);
    const acrossPages = ids.map((id, i) => (i === 70 ? ids[7]! : id));
    await expect(paginate(read(acrossPages), { fn: 'runs.list', pageSize: 50 })).rejects.toMatchObject({
      shift: 'id_repeated',
    });
  });

  it('still checks the part read before `until` for shifts', async () => {
    const m = memoryList(200, { beforePage: (call, list) => call === 2 && list.unshift({ id: 5000 }) });
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, until: (i) => i.id < 120 });
    // The first walk saw the total move between pages 1 and 2; the second walk is clean.
    expect(items[0]!.id).toBe(5000);
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    expect(items.at(-1)!.id).toBe(120);
  });

  it('keeps only the items `keep` wants, and still checks every item read for shifts', async () => {
    const m = memoryList(300);
    const items = await paginate(m.fetch, { fn: 'urls.list', pageSize: 100, keep: (i) => i.id % 7 === 0 });
    expect(items.map((i) => i.id)).toEqual(m.list.filter((i) => i.id % 7 === 0).map((i) => i.id));

    // A repeated id among the items NOT kept is still a shift: the walk is read again.
    let repeated = false;
    const fetch: PageFetcher<Item> = async (offset, limit) => {
      const page = m.list.slice(offset, offset + limit);
      if (offset === 100 && !repeated) {
        repeated = true;
        return { items: [{ id: 201 }, ...page.slice(1)], total: 300 }; // 201 (not kept) came on page 1 too
      }
      return { items: page, total: 300 };
    };
    const again = await paginate(fetch, { fn: 'urls.list', pageSize: 100, keep: (i) => i.id % 7 === 0 });
    expect(repeated).toBe(true);
    expect(again.map((i) => i.id)).toEqual(items.map((i) => i.id));
    // Nothing kept at all is an empty list, not a failure.
    await expect(paginate(m.fetch, { fn: 'urls.list', pageSize: 100, keep: () => false })).resolves.toEqual([]);
  });
  it('gives up when a page in the middle is short of the step the first page set (short_page)', async () => {
    const fetch: PageFetcher<Item> = async (offset) => ({
      items: offset === 2 ? [{ id: 3 }] : [{ id: 10 - offset }, { id: 9 - offset }],
      total: 6,
    });
    const err = await paginate(fetch, { fn: 'runs.list', pageSize: 2 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ shift: 'short_page', walks: 3 });
  });

  it('passes errors of the page reads through unchanged', async () => {
    const boom = new Error('refused');
    await expect(paginate(async () => Promise.reject(boom), { fn: 'runs.list', pageSize: 5 })).rejects.toBe(boom);
  });
});

describe('a newest-first list (newestFirst)', () => {
  /** `count` new items at the head, with ids above every other. */
  let nextId = 10_000;
  const arrive = (list: Item[], count: number) =>
    list.unshift(...Array.from({ length: count }, () => ({ id: nextId++ })).reverse());

  it.each([false, true])(
    'reads every item once in one walk while new ones arrive at the head before every page (readAhead %s)',
    async (readAhead) => {
      // 1, 2, 3, … items before pages 2, 3, 4, …; 60 before page 5, more than a page: its repeats go on into page 6.
      const m = memoryList(400, {
        beforePage: (call, list) => call > 1 && arrive(list, call === 5 ? 60 : call - 1),
      });
      const before = m.list.map((i) => i.id);
      const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, newestFirst: true, readAhead });
      expect(items.map((i) => i.id)).toEqual(before);
      // One walk, to the end of the grown list.
      expect(m.calls.map((c) => c.offset)).toEqual(Array.from({ length: m.calls.length }, (_, i) => i * 50));
      expect(m.calls.length).toBeGreaterThan(8);
    },
  );

  /** Changes of the list before the second page of every walk that must fail it. */
  const moves: { name: string; shift: PaginationShift; change: (list: Item[]) => void }[] = [
    { name: 'an item read goes', shift: 'total_changed', change: (list) => list.splice(10, 1) },
    { name: 'an item not yet read goes', shift: 'total_changed', change: (list) => list.splice(90, 1) },
    {
      name: 'an item read goes and two arrive, one at the head and one below the read position',
      shift: 'total_changed',
      change: (list) => {
        list.splice(10, 1);
        list.splice(80, 0, { id: nextId++ });
        arrive(list, 1);
      },
    },
    {
      name: 'an item not yet read goes and two arrive at the head',
      shift: 'id_repeated',
      change: (list) => {
        list.splice(90, 1);
        arrive(list, 2);
      },
    },
    {
      name: 'an item arrives, and an item read and one not yet read swap places',
      shift: 'id_repeated',
      change: (list) => {
        arrive(list, 1);
        [list[11], list[71]] = [list[71]!, list[11]!];
      },
    },
  ];

  it.each(moves)('fails the walk when $name ($shift)', async ({ shift, change }) => {
    const m = memoryList(120, { beforePage: (_call, list, offset) => offset === 50 && change(list) });
    const err = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, newestFirst: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiPaginationError);
    expect(err).toMatchObject({ shift, walks: 3 });
  });

  it('counts the items passed over unparsed at the head of a page among the repeats', async () => {
    const ids = Array.from({ length: 130 }, (_, i) => 130 - i);
    let calls = 0;
    const fetch: PageFetcher<Item> = async (offset, limit) => {
      if (++calls > 1) ids.unshift(nextId++, nextId++, nextId++);
      const slice = ids.slice(offset, offset + limit);
      return {
        items: slice.filter((id) => id % 2 === 0).map((id) => ({ id })),
        passed: slice.filter((id) => id % 2 === 1),
        total: ids.length,
      };
    };
    const kept: number[] = [];
    for await (const page of pageStream(fetch, { fn: 'backups.list', pageSize: 50, newestFirst: true }))
      kept.push(...page.items.map((i) => i.id));
    expect(kept).toEqual(Array.from({ length: 65 }, (_, i) => 130 - 2 * i));
  });
});

/** A list whose pages answer after a few ms, counting how many are asked for and not yet answered. */
function slowList(count: number) {
  const m = memoryList(count);
  const load = { inFlight: 0, max: 0 };
  const fetch: PageFetcher<Item> = async (offset, limit) => {
    load.max = Math.max(load.max, ++load.inFlight);
    await new Promise((resolve) => setTimeout(resolve, 2));
    load.inFlight--;
    return m.fetch(offset, limit);
  };
  return { ...m, fetch, load };
}

describe('paginate with readAhead', () => {
  it('asks for the next page while the current one is on its way: two in flight, every item once, in order', async () => {
    const m = slowList(950);
    const items = await paginate(m.fetch, { fn: 'apps.list', pageSize: 100, readAhead: true });
    expect(items.map((i) => i.id)).toEqual(m.list.map((i) => i.id));
    expect(m.calls.map((c) => c.offset)).toEqual(Array.from({ length: 10 }, (_, i) => i * 100));
    expect(m.load.max).toBe(2);
  });

  it('reads one page after another without it', async () => {
    const m = slowList(500);
    await paginate(m.fetch, { fn: 'apps.list', pageSize: 100 });
    expect(m.load.max).toBe(1);
  });

  it('stops early at `until` having asked for at most one page more, and waits for it before returning', async () => {
    const m = slowList(1000);
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, readAhead: true, until: (i) => i.id < 880 });
    expect(items).toHaveLength(121);
    // Pages 0-2 hold the stop; page 3 was asked for ahead of it; nothing is left running.
    expect(m.calls.map((c) => c.offset)).toEqual([0, 50, 100, 150]);
    expect(m.load.inFlight).toBe(0);
  });

  it('cancels the page asked ahead when it stops early, instead of waiting out that page', async () => {
    const m = memoryList(1000);
    const cancelled: number[] = [];
    // Pages after the first two never answer unless cancelled (a page stuck in retries, say).
    const fetch: PageFetcher<Item> = (offset, limit, signal) =>
      offset < 100
        ? m.fetch(offset, limit)
        : new Promise((_, reject) =>
            signal?.addEventListener('abort', () => {
              cancelled.push(offset);
              reject(new Error('aborted'));
            }),
          );
    // The stop is in the second page (ids 950-901); the third was asked for ahead of it.
    const items = await paginate(fetch, { fn: 'runs.list', pageSize: 50, readAhead: true, until: (i) => i.id < 930 });
    expect(items).toHaveLength(71);
    expect(cancelled).toEqual([100]);
  });

  it('follows a lower maximum limit: the first page sets the step of the pages asked for ahead', async () => {
    const m = memoryList(250, { maxLimit: 100 });
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 200, readAhead: true });
    expect(items).toHaveLength(250);
    expect(m.calls.map((c) => c.offset)).toEqual([0, 100, 200]);
  });

  it('waits for the page asked ahead when the current one fails, then passes the failure on', async () => {
    const m = slowList(400);
    const boom = new Error('refused');
    const fetch: PageFetcher<Item> = (offset, limit) =>
      offset === 100 ? Promise.reject(boom) : m.fetch(offset, limit);
    await expect(paginate(fetch, { fn: 'runs.list', pageSize: 100, readAhead: true })).rejects.toBe(boom);
    expect(m.load.inFlight).toBe(0);
  });
});

describe('pageStream', () => {
  it('yields the pages of one walk in order', async () => {
    const m = memoryList(130);
    const pages: number[] = [];
    for await (const page of pageStream(m.fetch, { fn: 'backups.list', pageSize: 50 })) pages.push(page.items.length);
    expect(pages).toEqual([50, 50, 30]);
  });

  it('ends with ApiPaginationError (walks: 1) at a shift, since handed-out pages cannot be taken back', async () => {
    const m = memoryList(130, { beforePage: (call, list) => call === 2 && list.unshift({ id: 999 }) });
    const seen: number[] = [];
    const err = await (async () => {
      for await (const page of pageStream(m.fetch, { fn: 'backups.list', pageSize: 50 })) seen.push(page.items.length);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([50]);
    expect(err).toBeInstanceOf(ApiPaginationError);
    expect(err).toMatchObject({ shift: 'total_changed', walks: 1 });
  });
});

describe('items passed over unparsed (QuarantinedPage.passed)', () => {
  /** 130 items, ids 130..1; the odd ids passed over, as a reader's `passOver` would leave them. */
  const passing = (beforePage?: (call: number, ids: number[]) => void) => {
    const ids = Array.from({ length: 130 }, (_, i) => 130 - i);
    let calls = 0;
    const fetch: PageFetcher<Item> = async (offset, limit) => {
      beforePage?.(++calls, ids);
      const slice = ids.slice(offset, offset + limit);
      return {
        items: slice.filter((id) => id % 2 === 0).map((id) => ({ id })),
        passed: slice.filter((id) => id % 2 === 1),
        total: ids.length,
      };
    };
    return fetch;
  };

  it('count toward the page and the total, and are not handed on', async () => {
    const walked: number[] = [];
    const kept: number[] = [];
    for await (const page of pageStream(passing(), { fn: 'backups.list', pageSize: 50 })) {
      walked.push(page.walked);
      kept.push(...page.items.map((i) => i.id));
    }
    expect(walked).toEqual([50, 50, 30]);
    expect(kept).toHaveLength(65);
    expect(kept.every((id) => id % 2 === 0)).toBe(true);
    await expect(paginate(passing(), { fn: 'backups.list', pageSize: 50 })).resolves.toHaveLength(65);
  });

  it('are checked for repeats: a passed id that comes twice is a shift', async () => {
    // Before page 2, the oldest item goes and a new one comes at the top (the total holds): page 2
    // then starts with page 1's last id, 81, which is passed over.
    const fetch = passing((call, ids) => {
      if (call !== 2) return;
      ids.pop();
      ids.unshift(999);
    });
    const err = await (async () => {
      for await (const _page of pageStream(fetch, { fn: 'backups.list', pageSize: 50 }));
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiPaginationError);
    expect(err).toMatchObject({ shift: 'id_repeated' });
  });

  it('count toward maxItems, even on a page where every item is passed over', async () => {
    const fetch: PageFetcher<Item> = async (offset, limit) => ({
      items: [],
      passed: Array.from({ length: limit }, (_, i) => offset + i + 1),
      total: 1_000,
    });
    await expect(
      paginate(fetch, { fn: 'backups.list', pageSize: 100, maxItems: 250, until: () => false }),
    ).rejects.toThrow(/250/);
  });
});
