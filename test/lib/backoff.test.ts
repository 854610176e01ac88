/**
 * The one backoff every loop uses: failures in a row → waits (exponential, capped), the jitter's
 * bounds (only ever shortens, by at most its share), and a success starting it over.
 */
import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, LOOP_BACKOFF } from '../../src/lib/backoff.js';

const noJitter = () => 1;

describe('backoffDelay', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [4, 8_000],
    [6, 32_000],
    [7, 60_000],
    [100, 60_000],
    [10_000, 60_000],
    [0, 1_000],
  ])('failure %i waits %i ms (no jitter, 1 s doubling to 1 min)', (failures, expected) => {
    expect(backoffDelay(failures, { ...LOOP_BACKOFF, random: noJitter })).toBe(expected);
  });

  it.each([
    // [failures, jitter, random, expected]
    [1, 0.5, 0, 500],
    [1, 0.5, 0.5, 750],
    [7, 0.5, 0, 30_000],
    [7, 0.2, 0, 48_000],
    [7, 1, 0, 0],
    [7, 0, 0, 60_000],
  ])('failure %i with jitter %d and random %d waits %i ms', (failures, jitter, random, expected) => {
    expect(backoffDelay(failures, { ...LOOP_BACKOFF, jitter, random: () => random })).toBe(expected);
  });

  it('stays within [cap × (1 − jitter), cap] at the cap, whatever the randomness', () => {
    const seen: number[] = [];
    for (let i = 0; i < 1_000; i++) seen.push(backoffDelay(50, LOOP_BACKOFF));
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(30_000);
    expect(Math.max(...seen)).toBeLessThanOrEqual(60_000);
    // Jitter actually spreads them (not all in step).
    expect(new Set(seen).size).toBeGreaterThan(100);
  });

  it('keeps the outbox’s waits: 10 s doubling to 10 min, up to a fifth off', () => {
    const outbox = { baseMs: 10_000, capMs: 600_000, jitter: 0.2 };
    expect(backoffDelay(1, { ...outbox, random: () => 1 })).toBe(10_000);
    expect(backoffDelay(5, { ...outbox, random: () => 1 })).toBe(160_000);
    expect(backoffDelay(60, { ...outbox, random: () => 1 })).toBe(600_000);
    expect(backoffDelay(1, { ...outbox, random: () => 0 })).toBe(8_000);
  });
});

describe('Backoff', () => {
  it('counts failures in a row, grows to the cap, and starts over after a success', () => {
    const b = new Backoff({ baseMs: 100, capMs: 1_000, random: noJitter });
    expect([b.failed(), b.failed(), b.failed(), b.failed(), b.failed(), b.failed()]).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(b.failures).toBe(6);
    b.reset();
    expect(b.failures).toBe(0);
    expect(b.failed()).toBe(100);
  });
});
