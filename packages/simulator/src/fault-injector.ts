/**
 * Faults the simulator injects on purpose, per function or for every function: error answers,
 * latency, hanging requests, proxy HTML pages, broken or mistyped JSON, rate limiting, and hostile
 * answers (huge or endless bodies, the caller's token echoed, a list that never ends). A fault
 * with `rate` below 1 picks its victims with a seeded generator, so a test run repeats exactly.
 */
import type { FunctionName } from '../../../src/api/functions.js';
import type { ErrorCode } from '../../../src/api/schemas.js';
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
  /**
   * Status 200 and a valid JSON answer of this many MB (1 MB = 1,048,576 bytes), streamed
   * chunked with no Content-Length: the real answer with a long `padding` string beside `data`.
   * Only a 200 answer is made huge; a refusal is sent as it is.
   */
  hugeMb?: number;
  /**
   * With `hugeMb`: the padding is an array of tiny values (`[0,0,0,…]`) instead of one string, the
   * shape whose parse builds the most per byte (a client that parsed 16 MB of it would build
   * millions of values).
   */
  hugeDense?: boolean;
  /**
   * Status 200 and a body that starts like a list answer and never ends: 1 MB every 10 ms (less
   * when the client reads slower) until the client disconnects or the simulator closes. The
   * request is not handled (a change is not made), as with `hang`.
   */
  endless?: boolean;
  /**
   * The caller's bearer token in the answer: as the first record's `id` (a string) and inside a
   * free-text field (a step's `reason`, a `name`, a log `line`, a run's `record`…); a refusal's
   * message quotes it.
   */
  echoToken?: boolean;
  /**
   * With `echoToken`: other text echoed beside it (a webhook URL of the caller's, say), and the
   * token and that text also as a key of the first record (`{"<token>": "echoed"}` in `extra`).
   */
  echoText?: string;
  /** With `echoToken`: every echoed character spelled as a JSON `\uXXXX` escape, keys included. */
  echoEscaped?: boolean;
  /**
   * A list answers `total: 1000000000` and a full page (`limit` items, the list's first items
   * repeated) of ids never given before, whatever the offset, for ever. Only lists are affected;
   * a list with nothing in it stays empty.
   */
  endlessList?: boolean;
  /**
   * A list's `total` off by this many (negative: fewer) while its items stay true: a service that
   * caps or miscounts its total (§2 states none). Only lists are affected.
   */
  totalOff?: number;
  /**
   * One record's timestamp written so no reader can parse it ("sometime yesterday"): the record
   * with `id` (a list's item, or the answer of a read by id), else the first record; its `field`,
   * else its first timestamp (a field ending in `_at` holding a time). The reference leaves the
   * format open (§2): one odd record, not a whole answer.
   */
  unreadableTime?: { id?: number; field?: string };
  /**
   * One field of one record set to `value`, whatever its type: the record with `id`, else the
   * first; `field` a path within the record (`ssl_status`, `urls.0.ssl_status`, `watcher.state`).
   * A value beyond the stated ones (`ssl_status: revoked`, §3), or any field broken in turn.
   */
  recordField?: {
    field: string;
    value: unknown;
    id?: number;
    /**
     * A string `value` repeated this many times (a 7 MB step reason, too big to send to the
     * control interface): the simulator builds it.
     */
    repeat?: number;
    /** An object `value` widened with this many more fields (`f0: "v0"`, …): one item of 126,000 fields. */
    fields?: number;
  };
  /**
   * Status 500 with an error code the reference does not list and no earlier answer gave
   * (`invented_1`, `invented_2`, …): a service whose codes would grow a metric label without bound.
   */
  inventedErrorCodes?: boolean;
  /** Status 500 with this error code, word for word, listed or not (`__proto__`, a service's own). */
  errorWord?: string;
  /** Apply to the next N matching requests only. */
  times?: number;
  /** Apply only to the calls about these records (the path's id: a read by id, a change). */
  ids?: readonly number[];
}

/** Where a fault applies: one function or all of them. */
export type FaultTarget = FunctionName | '*';

/** The `total` an endlessList fault answers. */
export const ENDLESS_LIST_TOTAL = 1_000_000_000;
/** The first id an endlessList fault gives, above every seeded or created record's. */
const FIRST_ENDLESS_ID = 900_000_000;

/** Holds the faults set by the control interface and decides which request they hit. */
export class FaultInjector {
  private readonly faults = new Map<FaultTarget, { spec: FaultSpec; left: number | null }>();
  private readonly rng: Prng;
  private nextEndlessId = FIRST_ENDLESS_ID;
  private nextInventedCode = 0;

  constructor(seed: number) {
    this.rng = new Prng(seed ^ 0x5eed);
  }

  /** Sets (replaces) the fault of a target; throws on a value it cannot apply. */
  set(target: FaultTarget, spec: FaultSpec): void {
    if (
      spec.hugeMb !== undefined &&
      !(typeof spec.hugeMb === 'number' && Number.isFinite(spec.hugeMb) && spec.hugeMb > 0)
    ) {
      throw new Error(`hugeMb must be a number of MB above 0, got ${String(spec.hugeMb)}`);
    }
    this.faults.set(target, { spec, left: spec.times ?? null });
  }

  /** An error code no inventedErrorCodes answer has given yet. */
  freshErrorCode(): string {
    this.nextInventedCode += 1;
    return `invented_${this.nextInventedCode}`;
  }

  /** An id no endlessList page has given yet. */
  freshId(): number {
    this.nextEndlessId += 1;
    return this.nextEndlessId;
  }

  /** Removes every fault. */
  clear(): void {
    this.faults.clear();
  }

  /**
   * The fault hitting this request (about record `id`, if its path names one), if any; a
   * function's own fault wins over `*`. Counts `times`.
   */
  take(fn: FunctionName, id: number | null = null): FaultSpec | null {
    for (const target of [fn, '*'] as const) {
      const entry = this.faults.get(target);
      if (!entry) continue;
      if (entry.spec.ids && (id === null || !entry.spec.ids.includes(id))) continue;
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
