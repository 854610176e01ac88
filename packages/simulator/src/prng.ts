/**
 * Deterministic pseudo-random numbers for the simulator: the same seed gives the same data, so
 * tests and benchmarks can rely on it. Never Math.random.
 */

/** Mixes integers into one well-spread 32-bit unsigned integer (a stateless hash). */
export function hash32(...values: number[]): number {
  let h = 0x9e3779b9;
  for (const v of values) {
    h ^= Math.imul((v | 0) ^ Math.floor(v / 0x100000000), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
    h = (h + 0x6d2b79f5) | 0;
  }
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}

/** A seeded generator (mulberry32): a stream of numbers in [0, 1) and helpers over it. */
export class Prng {
  private s: number;

  constructor(seed: number) {
    this.s = hash32(seed) | 0;
  }

  /** A number in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) | 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** `n` lowercase hex digits (commit SHAs). */
  hex(n: number): string {
    let out = '';
    while (out.length < n)
      out += Math.floor(this.next() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, n);
  }
}
