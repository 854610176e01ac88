/**
 * Faults the simulator injects on purpose, per function or for every function: error answers,
 * latency, hanging requests, proxy HTML pages, broken or mistyped JSON, rate limiting. A fault
 * with `rate` below 1 picks its victims with a seeded generator, so a test run repeats exactly.
 */
import type { FunctionName } from '../api/functions.js';
import type { ErrorCode } from '../api/schemas.js';
import { Prng } from './prng.js';

/** One fault. Several effects may be combined; `latencyMs` delays whatever else happens. */
export interface FaultSpec {
  /** Answer this error code (with its status) instead of the real answer. */
  errorCode?: ErrorCode;
  /** Share of matching requests hit, 0..1; default 1. */
  rate?: number;
  /** Wait this long (wall time) before answering. */
  latencyMs?: number;
  /** Never answer (the connection stays open until the client gives up or the simulator closes). */
  hang?: boolean;
  /** A proxy's HTML error page: status 502, text/html. */
  html502?: boolean;
  /** Status 200 with JSON cut off in the middle. */
  malformedJson?: boolean;
  /** Status 200, valid JSON, but one field of the wrong type (total as a string, or an item's id). */
  wrongType?: boolean;
  /** 429 rate_limited, with Retry-After as seconds, as an HTTP date, or left out. */
  rateLimit?: { retryAfter: 'seconds' | 'date' | 'none'; seconds?: number };
  /** Apply to the next N matching requests only. */
  times?: number;
}

/** Where a fault applies: one function or all of them. */
export type FaultTarget = FunctionName | '*';

/** Holds the faults set by the control interface and decides which request they hit. */
export class FaultInjector {
  private readonly faults = new Map<FaultTarget, { spec: FaultSpec; left: number | null }>();
  private readonly rng: Prng;

  constructor(seed: number) {
    this.rng = new Prng(seed ^ 0x5eed);
  }

  /** Sets (replaces) the fault of a target. */
  set(target: FaultTarget, spec: FaultSpec): void {
    this.faults.set(target, { spec, left: spec.times ?? null });
  }

  /** Removes every fault. */
  clear(): void {
    this.faults.clear();
  }

  /** The fault hitting this request, if any; a function's own fault wins over `*`. Counts `times`. */
  take(fn: FunctionName): FaultSpec | null {
    for (const target of [fn, '*'] as const) {
      const entry = this.faults.get(target);
      if (!entry) continue;
      const rate = entry.spec.rate ?? 1;
      if (rate < 1 && this.rng.next() >= rate) return null;
      if (entry.left !== null) {
        entry.left -= 1;
        if (entry.left <= 0) this.faults.delete(target);
      }
      return entry.spec;
    }
    return null;
  }
}
