/**
 * One simulator's parts, wired together: the state and its seed, the run engine, the renderers,
 * the handlers, faults, idempotency, the rate limit and the request log, and the service's modes
 * (largest `limit`, time format, state words). The HTTP server and the control interface both work on this;
 * nothing lives at module level.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../../src/lib/clock.js';
import { ChangeHandlers } from './change-handlers.js';
import { FaultInjector } from './fault-injector.js';
import { FaultStreams } from './fault-streams.js';
import { IdempotencyStore } from './idempotency-store.js';
import { LogTail } from './log-tail.js';
import { ProblemFinder } from './problem-finder.js';
import { RateLimiter, type RateLimitSpec } from './rate-limiter.js';
import { ReadHandlers, type ListGrading } from './read-handlers.js';
import { RunEngine } from './run-engine.js';
import { seedState } from './seed-state.js';
import { SimState } from './sim-state.js';
import { StateWords, type StateWordSet } from './state-words.js';
import { TimeFormatter, type TimeFormat } from './time-format.js';
import { TokenGrants, type SimTokenSpec } from './token-grants.js';
import { Views } from './views.js';

/** The request log keeps at most this many entries (oldest dropped), so a soak run stays bounded. */
const REQUEST_LOG_LIMIT = 100_000;
/**
 * How many of the oldest entries go at once when the log is over its limit: dropping one per
 * request would shift the whole array on every request once it is full (a 100,000-entry copy each).
 */
const REQUEST_LOG_TRIM = 10_000;

/** What the core is built from. */
export interface CoreOptions {
  apps: number;
  seed: number;
  clock: Clock;
  adminToken: string;
  tokens: readonly SimTokenSpec[];
  maxLimit: number;
  timeFormat: TimeFormat;
  rateLimit: RateLimitSpec | null;
  stateWords: StateWordSet;
  /** Whether lists are graded by the token's readable environments (see read-handlers.ts). */
  listGrading: ListGrading;
  logger: Logger;
}

/** One request the simulator answered (or left hanging: status 0). */
export interface RequestRecord {
  /** Catalogue name; '' when the path matched no function. */
  fn: string;
  method: string;
  path: string;
  /** The query string as sent (`?limit=50&offset=0`), or ''. */
  query: string;
  status: number;
  idempotencyKey?: string;
  /** Simulator time. */
  at: number;
}

/** The parts of one simulator. */
export class SimulatorCore {
  readonly state = new SimState();
  readonly engine: RunEngine;
  readonly views: Views;
  readonly problemFinder: ProblemFinder;
  readonly reads: ReadHandlers;
  readonly changes: ChangeHandlers;
  readonly faults: FaultInjector;
  /** Huge and endless bodies being written. */
  readonly streams = new FaultStreams();
  readonly idempotency = new IdempotencyStore();
  readonly grants: TokenGrants;
  readonly requestLog: RequestRecord[] = [];
  readonly seed: number;
  /** Largest `limit` a call may give (switchable at run time). */
  maxLimit: number;
  /** Writes every timestamp of every answer; its format is switchable at run time. */
  readonly times: TimeFormatter;
  readonly rateLimiter: RateLimiter;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Added to the clock's time by `advance`. */
  offset = 0;

  constructor(options: CoreOptions) {
    this.seed = options.seed;
    this.maxLimit = options.maxLimit;
    this.clock = options.clock;
    this.logger = options.logger;
    this.times = new TimeFormatter(options.timeFormat, options.seed);
    this.rateLimiter = new RateLimiter(options.rateLimit);
    this.engine = new RunEngine(this.state, options.seed);
    seedState(this.state, this.engine, { apps: options.apps, seed: options.seed, now: this.now() });
    const words = new StateWords(options.stateWords);
    this.views = new Views(this.state, this.engine, this.times, words);
    this.problemFinder = new ProblemFinder(this.state, this.views, this.engine);
    this.reads = new ReadHandlers(
      this.state,
      this.views,
      this.problemFinder,
      new LogTail(this.times, this.state, this.engine),
      options.seed,
      words,
    );
    this.reads.listGrading = options.listGrading;
    this.changes = new ChangeHandlers(this.state, this.engine);
    this.faults = new FaultInjector(options.seed);
    this.grants = new TokenGrants(this.state, options.adminToken, options.tokens);
  }

  /** Simulator time: the clock plus what `advance` added. */
  now(): number {
    return this.clock.now() + this.offset;
  }

  /** Brings every run up to the current time; returns that time. */
  tick(): number {
    const now = this.now();
    this.engine.tick(now);
    return now;
  }

  /** Appends to the request log. */
  record(entry: RequestRecord): void {
    this.requestLog.push(entry);
    if (this.requestLog.length > REQUEST_LOG_LIMIT) this.requestLog.splice(0, REQUEST_LOG_TRIM);
  }
}
