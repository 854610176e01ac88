import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate-limiter.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Lets pending promise callbacks run. */
const flush = () => new Promise<void>((r) => setImmediate(r));

describe('RateLimiter', () => {
  it('lets a burst through at once, then one request per 1/rate seconds', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 2, clock });
    const done: number[] = [];
    for (let i = 0; i < 5; i++) void limiter.acquire().then(() => done.push(i));
    await flush();
    expect(done).toEqual([0, 1]);
    clock.advance(499);
    await flush();
    expect(done).toEqual([0, 1]);
    clock.advance(1);
    await flush();
    expect(done).toEqual([0, 1, 2]);
    clock.advance(1_000);
    await flush();
    expect(done).toEqual([0, 1, 2, 3, 4]);
  });

  it('answers past_deadline without waiting when the token would come too late, and keeps no token', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 1, clock });
    expect(await limiter.acquire(undefined, clock.now() + 10)).toBe('acquired');
    expect(await limiter.acquire(undefined, clock.now() + 10)).toBe('past_deadline');
    clock.advance(1_000);
    // The refused request did not keep a token: one is there again after 1 s.
    expect(await limiter.acquire(undefined, clock.now())).toBe('acquired');
  });

  it('takes a burst of 429s answered at once as one step back, and the next one after the pause as another', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 8, clock });
    // Eight requests in flight (read-ahead, jobs side by side) all answered 429 by one wall: one
    // signal, not eight, or the rate would fall to its floor and pause a minute for one burst.
    const burst = Array.from({ length: 8 }, () => limiter.backOff());
    expect(burst.at(-1)).toMatchObject({ pauseMs: 1_000, requestsPerSecond: 4 });
    clock.advance(1_000);
    expect(limiter.backOff()).toMatchObject({ pauseMs: 2_000, requestsPerSecond: 2 });
  });

  it('sends the requests that waited through a pause at the rate after it, not all at its end', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 8, clock });
    // A 429 without Retry-After: every request waits 1 s, and the rate is down to 4/s.
    expect(limiter.backOff()).toMatchObject({ pauseMs: 1_000, requestsPerSecond: 4 });
    const start = clock.now();
    const left: number[] = [];
    for (let i = 0; i < 4; i++) void limiter.acquire().then(() => left.push(clock.now() - start));
    for (let t = 0; t < 2_000; t += 50) {
      clock.advance(50);
      await flush();
    }
    // At 4/s after the pause: the four jobs' requests queued meanwhile would otherwise meet the
    // service's wall again at once, and back off again, down to the floor.
    expect(left).toEqual([1_000, 1_250, 1_500, 1_750]);
  });

  it('holds back the requests already waiting for a token when a pause begins', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 8, clock });
    const start = clock.now();
    const left: number[] = [];
    // Sixteen requests: eight go at once, eight wait for tokens an eighth of a second apart.
    for (let i = 0; i < 16; i++) void limiter.acquire().then(() => left.push(clock.now() - start));
    await flush();
    expect(left).toHaveLength(8);
    // One of the first eight is answered 429: a pause of a second, the rate down to 4/s.
    limiter.backOff();
    for (let t = 0; t < 4_000; t += 25) {
      clock.advance(25);
      await flush();
    }
    // The eight that were waiting leave after the pause, at the lower rate, none during it.
    expect(left.slice(8)).toEqual([1_000, 1_250, 1_500, 1_750, 2_000, 2_250, 2_500, 2_750]);
  });

  it('halves the rate after a 429 with Retry-After too, and pauses for the wait it names', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 8, clock });
    expect(limiter.backOff(3_000)).toMatchObject({ pauseMs: 3_000, requestsPerSecond: 4 });
    // Another 429 of the same burst naming a longer wait holds every request back that long.
    clock.advance(500);
    expect(limiter.backOff(5_000)).toMatchObject({ pauseMs: 5_000, requestsPerSecond: 4 });
  });

  it('starts the pause over after a quiet minute, when the rate steps back up and meets the wall again', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 8, clock });
    // 429s in a row: 1 s, 2 s, 4 s; the rate down to 1/s.
    for (const pauseMs of [1_000, 2_000, 4_000]) {
      expect(limiter.backOff()).toMatchObject({ pauseMs });
      clock.advance(pauseMs);
    }
    // A quiet minute: the rate doubles back a step (to 2/s), which a service slower than the
    // configured rate answers with a 429 again. A new streak, not the fourth 429 in a row: were
    // it, each step up would cost a pause of 8, 16, 32 s, then a minute at every step, for good.
    clock.advance(61_000);
    expect(await limiter.acquire()).toBe('acquired');
    expect(limiter.backOff()).toMatchObject({ pauseMs: 1_000, requestsPerSecond: 1 });
  });

  it('holds every request back until pauseUntil', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 100, clock });
    limiter.pauseUntil(clock.now() + 3_000);
    let done = false;
    void limiter.acquire().then(() => (done = true));
    clock.advance(2_999);
    await flush();
    expect(done).toBe(false);
    clock.advance(1);
    await flush();
    expect(done).toBe(true);
  });

  it('rejects with the abort reason when the caller aborts while waiting, and gives the token back', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 1, clock });
    await limiter.acquire();
    const ac = new AbortController();
    const waiting = limiter.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    clock.advance(1_000);
    expect(await limiter.acquire(undefined, clock.now())).toBe('acquired');
  });

  it('does not limit at all with requestsPerSecond Infinity', async () => {
    const limiter = new RateLimiter({ requestsPerSecond: Infinity, clock: new ManualClock() });
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => limiter.acquire()));
    expect(new Set(outcomes)).toEqual(new Set(['acquired']));
  });

  it.each([0, -1, Number.NaN])('refuses requestsPerSecond %s', (rate) => {
    expect(() => new RateLimiter({ requestsPerSecond: rate, clock: new ManualClock() })).toThrow(/requestsPerSecond/);
  });

  it.each([
    { what: 'a pause for a Retry-After', pause: (l: RateLimiter) => l.backOff(30_000) },
    { what: "the tokens' schedule", pause: (l: RateLimiter) => void l.acquire() },
  ])('a clock stepped back an hour does not hold requests back for the hour: $what', async ({ pause }) => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ requestsPerSecond: 1, clock });
    pause(limiter);
    clock.stepBack(3_600_000);
    const done: string[] = [];
    void limiter.acquire().then((outcome) => done.push(outcome));
    clock.advance(1_000);
    await flush();
    expect(done).toEqual(['acquired']);
  });
});
