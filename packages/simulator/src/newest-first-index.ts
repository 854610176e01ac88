/**
 * Lists of records kept sorted newest first, overall, per app and per namespace, so a page of
 * 300,000 backups is a slice, not a sort. Records are ordered by a time key, ties by id, both
 * descending.
 */

/** What an indexed record must carry. */
export interface Indexed {
  readonly id: number;
  readonly appId: number | null;
  readonly nsId: number;
}

/** A record list sorted newest first with per-app and per-namespace views. */
export class NewestFirstIndex<T extends Indexed> {
  readonly all: T[] = [];
  private readonly apps = new Map<number, T[]>();
  private readonly namespaces = new Map<number, T[]>();

  constructor(private readonly key: (record: T) => number) {}

  /** The app's records, newest first (empty when none). */
  byApp(appId: number): readonly T[] {
    return this.apps.get(appId) ?? [];
  }

  /** The namespace's records, newest first (empty when none). */
  byNamespace(nsId: number): readonly T[] {
    return this.namespaces.get(nsId) ?? [];
  }

  /** Adds records that arrive already sorted newest first (the seed): appends without searching. */
  appendSorted(record: T): void {
    this.all.push(record);
    this.bucket(this.namespaces, record.nsId).push(record);
    if (record.appId !== null) this.bucket(this.apps, record.appId).push(record);
  }

  /** Adds one record at its place. */
  add(record: T): void {
    insert(this.all, record, this.compare);
    insert(this.bucket(this.namespaces, record.nsId), record, this.compare);
    if (record.appId !== null) insert(this.bucket(this.apps, record.appId), record, this.compare);
  }

  /** Changes a record's time key (through `mutate`) and moves it to its new place. */
  reposition(record: T, mutate: (record: T) => void): void {
    this.remove(record);
    mutate(record);
    this.add(record);
  }

  private remove(record: T): void {
    remove(this.all, record, this.compare);
    remove(this.bucket(this.namespaces, record.nsId), record, this.compare);
    if (record.appId !== null) remove(this.bucket(this.apps, record.appId), record, this.compare);
  }

  private readonly compare = (a: T, b: T): number => this.key(b) - this.key(a) || b.id - a.id;

  private bucket(map: Map<number, T[]>, id: number): T[] {
    let list = map.get(id);
    if (!list) map.set(id, (list = []));
    return list;
  }
}

function lowerBound<T>(list: T[], record: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(list[mid] as T, record) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insert<T>(list: T[], record: T, compare: (a: T, b: T) => number): void {
  list.splice(lowerBound(list, record, compare), 0, record);
}

function remove<T>(list: T[], record: T, compare: (a: T, b: T) => number): void {
  const at = lowerBound(list, record, compare);
  for (let i = at; i < list.length; i += 1) {
    if (list[i] === record) {
      list.splice(i, 1);
      return;
    }
    if (compare(list[i] as T, record) > 0) break;
  }
  // Fallback for a key changed without reposition(): a linear search keeps the lists consistent.
  const i = list.indexOf(record);
  if (i >= 0) list.splice(i, 1);
}
