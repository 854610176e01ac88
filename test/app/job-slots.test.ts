/** The jobs' last slots: what a new leader skips, and what it runs at once when it takes over. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobSlots } from '../../src/app/job-slots.js';
import { Store } from '../../src/state/store.js';

const MINUTE = 60_000;
const AT = Date.UTC(2026, 10, 24, 12, 0, 0);

let dir: string;
let store: Store;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-slots-'));
  store = Store.open(path.join(dir, 'state.db'));
});
afterEach(() => {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('JobSlots', () => {
  it.each([
    { name: 'a slot already run', last: AT, slot: AT, covered: true },
    { name: 'an earlier slot (a tick late by its jitter)', last: AT, slot: AT - MINUTE, covered: true },
    { name: 'the next slot', last: AT, slot: AT + MINUTE, covered: false },
    { name: 'any slot of a job never run', last: undefined, slot: AT, covered: false },
  ])('covers $name: $covered', ({ last, slot, covered }) => {
    const slots = new JobSlots(store);
    if (last !== undefined) store.transaction(() => slots.record('runs', last));
    expect(slots.covered('runs', slot)).toBe(covered);
    expect(slots.covered('urls', slot)).toBe(false);
  });

  it.each([
    { name: 'its predecessor ran it within the interval', last: AT - 30_000, due: false },
    { name: 'its last slot is exactly one interval old', last: AT - MINUTE, due: false },
    { name: 'its predecessor missed a slot', last: AT - MINUTE - 1, due: true },
    { name: 'it never ran', last: undefined, due: true },
  ])('runs a job at once at a takeover when $name: $due', ({ last, due }) => {
    const slots = new JobSlots(store);
    if (last !== undefined) store.transaction(() => slots.record('runs', last));
    expect(slots.dueAtTakeover('runs', AT, MINUTE)).toBe(due);
  });

  it('keeps the latest slot: a late cycle of an earlier slot does not move it back', () => {
    const slots = new JobSlots(store);
    store.transaction(() => slots.record('runs', AT));
    store.transaction(() => slots.record('runs', AT - MINUTE));
    expect(slots.last('runs')).toBe(AT);
    store.transaction(() => slots.record('runs', AT + MINUTE));
    expect(slots.last('runs')).toBe(AT + MINUTE);
  });
});
