/**
 * Process measurements for the benchmark and the soak: CPU time, peak RSS, RSS sampling and a
 * wrapper that times synchronous SQLite transactions from outside (the harness wraps the store
 * instance's `transaction`; production code carries no timing hook).
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

/** CPU time (user + system) of this process so far, in ms. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** The process's peak resident set size so far, in MB (kernel high-water mark). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * Current RSS in MB. `memoryUsage.rss()`, not `memoryUsage()`: the full call also walks the V8 heap
 * spaces; sampled every 10 ms it added tens of ms of CPU to a 10,000-app cycle (profiled).
 */
export function rssMb(): number {
  return process.memoryUsage.rss() / 1_048_576;
}

/** A memory line of another process's `/proc/<pid>/status` (`VmRSS`, `VmHWM`…) in kB; undefined once it is gone. */
export function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb);
  } catch {
    return undefined;
  }
}

/**
 * RSS of another process in MB, or NaN once it is gone. The benchmark samples the watchdog from
 * its parent: `memoryUsage.rss()` in the watchdog's own process reads `/proc/self/stat`, which held
 * its event loop 0.5–1 ms per call mid-cycle (docs/benchmarks.md, "Peak RSS").
 */
export function rssOfMb(pid: number): number {
  return (procStatusKb(pid, 'VmRSS') ?? Number.NaN) / 1024;
}

/** Samples a process's RSS every `everyMs` until stopped; the max seen is a peak for a window. */
export function watchRss(pid: number, everyMs = 10): { stop(): number } {
  let max = 0;
  const sample = (): void => {
    const mb = rssOfMb(pid);
    if (mb > max) max = mb;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}

/** Time and CPU spent in wrapped synchronous calls since the last reset. */
export interface SyncTimer {
  wallMs: number;
  cpuMs: number;
  calls: number;
  reset(): void;
}

/**
 * Wraps `target[method]` (a synchronous method, e.g. a Store's `transaction`) so each call's wall
 * and CPU time add up in the returned timer. Nested calls are counted once (the outermost).
 */
export function timeSyncMethod<T extends object, K extends keyof T>(target: T, method: K): SyncTimer {
  const original = target[method] as unknown as (...args: unknown[]) => unknown;
  const timer: SyncTimer = {
    wallMs: 0,
    cpuMs: 0,
    calls: 0,
    reset() {
      timer.wallMs = 0;
      timer.cpuMs = 0;
      timer.calls = 0;
    },
  };
  let depth = 0;
  (target as Record<PropertyKey, unknown>)[method as PropertyKey] = function wrapped(
    this: unknown,
    ...args: unknown[]
  ) {
    if (depth > 0) return original.apply(this, args);
    depth += 1;
    const w0 = performance.now();
    const c0 = process.cpuUsage();
    try {
      return original.apply(this, args);
    } finally {
      const c = process.cpuUsage(c0);
      timer.wallMs += performance.now() - w0;
      timer.cpuMs += (c.user + c.system) / 1000;
      timer.calls += 1;
      depth -= 1;
    }
  };
  return timer;
}

/** Rounds to `digits` decimals, for reports. */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
