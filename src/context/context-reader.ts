/**
 * Reading an alert's context, after the cycle that asked for it and never inside one: on its own
 * loop (`lib/background-loop.ts`), the pending asks oldest first, at most
 * `notify.context.max_per_pass` per pass and `concurrency` at once, through the API client every
 * job shares (so its rate limit holds for all of them). Per run, one `logs.tail` of the log of its
 * workflow around the failure and, for an update or upgrade, one `restore_points.list` of its app,
 * after one `runs.get` of a run the cycle announced from its list alone (its failed step, reason
 * and watcher: the runs collector keeps the answer);
 * what was read is stored ready in the state file, and the notifier is told, so the message
 * waiting for it goes out at once.
 *
 * What cannot be read becomes a note in the alert ("logs not available: …"), never an error of the
 * alert, and is logged once per cause. A refusal that does not go away by itself (the token lacks
 * `view_logs`, the project's plan has no logs) is remembered for the running configuration, so it
 * costs no more requests; a reload or restart asks again, as an operator's "fixed". An alert that
 * is over before its turn is not read at all. A pass stopped part-way (shutdown) leaves the rest
 * pending: they are read after the restart.
 */
import { ApiError, ApiTransportError } from '../api/errors.js';
import type { ApiClient } from '../api/client.js';
import { describeError } from '../api/describe-error.js';
import { FUNCTIONS } from '../api/functions.js';
import type { AlertStore } from '../alerts/alert-store.js';
import { mapLimit } from '../collectors/map-limit.js';
import { Secret } from '../lib/secret.js';
import type { RunContextAsk } from '../detectors/run-context.js';
import { BackgroundLoop } from '../lib/background-loop.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import type { Clock } from '../lib/clock.js';
import { clockTimeout } from '../lib/clock-timeout.js';
import type { AlertContext } from '../lib/alert-vocabulary.js';
import type { Logger } from '../lib/logger.js';
import { parseTime } from '../lib/parse-time.js';
import { FencedError } from '../state/fenced-error.js';
import type { ContextSettings } from '../config/context-config.js';
import type { ContextRow, ContextStore } from './context-store.js';
import { logExcerpt, logSince, logSourceOf } from './log-excerpt.js';
import { restorePointFacts } from './restore-point-facts.js';
import { runDetailFacts } from './run-detail-facts.js';
import type { Run } from '../api/schemas.js';
import { ownValue } from '../lib/own-value.js';

/** Restore points read to find a run's: the newest ones; a failed run's is among them. */
const RESTORE_POINTS_PAGE = 20;

/** How often the loop looks for pending asks when nothing woke it (the cycle stage wakes it). */
const IDLE_MS = 30_000;

/** What one pass did. */
export interface ContextPass {
  /** Asks whose context was read and stored. */
  read: number;
  /** Asks whose alert was over before their turn: stored without a request. */
  dropped: number;
  /** Requests made. */
  requests: number;
}

/** What the reader works with. */
export interface ContextReaderParts {
  store: ContextStore;
  alerts: AlertStore;
  client: ApiClient;
  settings: ContextSettings;
  /** The API token, scrubbed from every log line kept (the client does too; this is the second belt). */
  token: Secret;
  clock: Clock;
  logger: Logger;
  /** Told after a pass stored something: the messages waiting for it can go. */
  onRead: () => void;
  /**
   * Handed each run read by id (`runs.get`, its steps and watcher): the runs collector keeps it
   * (`RunsMemory.remember`), so the next cycle's finding says the step and reason without reading
   * the run again. Absent: the run is read for the alert's context alone.
   */
  onRunDetail?: (run: Run) => void;
  /**
   * Whether the cycle that fired the alert already read the run by id (its finding says the step
   * and reason): then it is not read again here. Absent: every run is read.
   */
  knowsRunDetail?: (runId: number) => boolean;
}

/** The words a refusal of a read is said in, by error code; the rest are said as the error. */
const REFUSED: Readonly<Record<string, (permission: string) => string>> = {
  plan_required: () => "the plan of the app's project does not include them",
  unavailable: () => 'the service cannot read them now',
  function_not_allowed: (permission) => `the API token lacks ${permission}`,
  access_denied: () => 'the API token may not read them for this app',
  not_found: () => 'the app is gone',
};

/**
 * Refusals that do not go away by themselves: remembered (per app, or for the token) for
 * `REFUSAL_MEMORY_MS`, then asked again. A plan upgraded or a permission granted is seen within
 * the hour, without a reload, at the cost of one request per app and hour while it lasts.
 */
const LASTING: ReadonlySet<string> = new Set(['plan_required', 'function_not_allowed', 'access_denied']);
const REFUSAL_MEMORY_MS = 60 * 60_000;

/** What is read, and how it is named in a note. */
const WHAT = { 'runs.get': 'run detail', 'logs.tail': 'logs', 'restore_points.list': 'restore point' } as const;
type ReadFn = keyof typeof WHAT;

/** One ask being read: what it asks, the context read so far, the pass's counts and the call options. */
interface Reading {
  ask: RunContextAsk;
  context: AlertContext;
  pass: ContextPass;
  opts: { signal?: AbortSignal };
}

/** Reads the context of pending asks; one per running configuration. */
export class ContextReader {
  readonly #p: ContextReaderParts;
  readonly #log: Logger;
  /** Failures of passes and of storing a read: once a minute each with a count (a store that is down fails them all). */
  readonly #quiet: RepeatedLog;
  readonly #loop: BackgroundLoop<ContextPass>;
  /** Lasting refusals, by function (the token's) or function and app: the note they give, and until when. */
  readonly #refused = new Map<string, { note: string; until: number }>();
  /** Causes already logged (function and code). */
  readonly #warned = new Set<string>();

  constructor(parts: ContextReaderParts) {
    this.#p = parts;
    this.#log = parts.logger.child({ stage: 'context' });
    this.#quiet = new RepeatedLog(this.#log, { clock: parts.clock });
    this.#loop = new BackgroundLoop<ContextPass>({
      clock: parts.clock,
      pass: (signal) => this.#pass(signal),
      sleepMs: () => IDLE_MS,
      onError: (err) =>
        err instanceof FencedError
          ? this.#log.debug({ reason: err.reason }, 'context pass ended: no longer the leader')
          : this.#quiet.error({ err }, 'context pass failed; the next pass tries again'),
      merge: (a, b) => ({ read: a.read + b.read, dropped: a.dropped + b.dropped, requests: a.requests + b.requests }),
    });
  }

  /** Starts the loop (a first pass at once: asks left pending by a stop or a crash are read). */
  start(): void {
    this.#loop.start();
  }

  /** Cuts the loop's sleep short: the cycle stage asked for something. */
  wake(): void {
    this.#loop.wake();
  }

  /**
   * Passes of the reader until none reads anything more, for `check` and tests, where no loop runs.
   * Bounded by `waitMs` on the clock (`notify.context.wait`): what is not read by then stays
   * pending, as in the daemon.
   */
  async readAll(waitMs: number, stop: AbortSignal): Promise<ContextPass> {
    const wait = clockTimeout(this.#p.clock, waitMs, () => new Error('notify.context.wait is over'), stop);
    const { signal } = wait;
    const total: ContextPass = { read: 0, dropped: 0, requests: 0 };
    try {
      for (;;) {
        // One pass now, or the one under way: concurrent calls share it.
        const pass = await this.#loop.runNow(signal);
        for (const key of ['read', 'dropped', 'requests'] as const) total[key] += pass[key];
        if (pass.read + pass.dropped === 0 || signal.aborted) return total;
      }
    } finally {
      wait.dispose();
    }
  }

  /** Ends the loop: the pass under way may finish for up to `deadlineMs`, then its reads are aborted (left pending). */
  stop(deadlineMs = 0): Promise<void> {
    return this.#loop.stop(deadlineMs);
  }

  async #pass(signal: AbortSignal | undefined): Promise<ContextPass> {
    const pass: ContextPass = { read: 0, dropped: 0, requests: 0 };
    const rows = this.#p.store.pending(this.#p.settings.max_per_pass);
    if (rows.length === 0) return pass;
    await mapLimit(rows, this.#p.settings.concurrency, async (row) => {
      if (signal?.aborted) return;
      try {
        await this.#readOne(row, pass, signal);
      } catch (err) {
        // No longer the leader: the pass ends; the next leader reads what is pending.
        if (err instanceof FencedError) throw err;
        // A storage fault or a bug: the ask stays pending for the next pass.
        this.#quiet.error({ err, subject: row.subject }, 'cannot store the context of an alert; will try again');
      }
    });
    if (pass.read + pass.dropped > 0) {
      this.#log.debug({ ...pass }, 'context read');
      this.#p.onRead();
    }
    return pass;
  }

  async #readOne(row: ContextRow, pass: ContextPass, signal: AbortSignal | undefined): Promise<void> {
    const { store, alerts, clock } = this.#p;
    if (alerts.get(row.fingerprint)?.status !== 'firing') {
      // Over (or gone) before its turn: nothing waits for it, so nothing is asked.
      store.store.transaction(() => store.ready(row.subject, { facts: [], log: null, notes: [] }, clock.now()));
      pass.dropped += 1;
      return;
    }
    const context: AlertContext = { facts: [], log: null, notes: [] };
    const reading: Reading = { ask: row.ask, context, pass, opts: signal ? { signal } : {} };
    const { logs, restore_points } = this.#p.settings;
    await this.#readRun(reading);
    if (logs.enabled) await this.#readLogs(reading);
    if (restore_points.enabled && restore_points.actions.includes(row.ask.action))
      await this.#readRestorePoint(reading);
    // Stopped part-way: what was read is not the whole answer; read it again after the restart.
    if (signal?.aborted) return;
    store.store.transaction(() => store.ready(row.subject, context, clock.now()));
    pass.read += 1;
  }

  async #readLogs(reading: Reading): Promise<void> {
    const { ask, context } = reading;
    const { settings, client, clock, token } = this.#p;
    const { lead, sources } = settings.logs;
    const source = logSourceOf(ask, sources);
    const failedAt = parseTime(ask.at);
    const since = logSince(failedAt, clock.now(), lead);
    const answer = await this.#read('logs.tail', reading, () =>
      client.logs.tail(ask.appId, { source, ...(since ? { since } : {}) }, reading.opts),
    );
    if (!answer) return;
    const scrubbed = answer.items.map((item) => ({ ...item, line: Secret.scrub(item.line, [token]) }));
    const excerpt = logExcerpt(scrubbed, { ...settings.logs, failedAt });
    if (excerpt.lines.length === 0) {
      // Truncated (more lines than `limit`, reference §4): the answer's lines all came after the
      // failure, so the log is not empty there; it logged too much since to reach back to it.
      context.notes.push(
        answer.truncated
          ? `no ${source} log lines around the failure among the ${answer.items.length} newest: more were logged since than logs.tail gives`
          : `no ${source} log lines around the failure`,
      );
      return;
    }
    context.log = { source, ...excerpt };
  }

  /**
   * The run by id: its failed step, reason and watcher, when the cycle that fired its alert
   * announced it from its list item (a storm, past the cycle's reads by id). Handed to the runs
   * collector too (`onRunDetail`), so its finding says them from the next cycle.
   */
  async #readRun(reading: Reading) {
    const { ask } = reading;
    if (this.#p.knowsRunDetail?.(ask.runId)) return;
    const run = await this.#read('runs.get', reading, () => this.#p.client.runs.get(ask.runId, reading.opts));
    if (!run) return;
    reading.context.facts.push(...runDetailFacts(run));
    this.#p.onRunDetail?.(run);
  }

  async #readRestorePoint(reading: Reading): Promise<void> {
    const { ask, context } = reading;
    const page = await this.#read('restore_points.list', reading, () =>
      this.#p.client.restorePoints(ask.appId).list({ limit: RESTORE_POINTS_PAGE }, reading.opts),
    );
    if (!page) return;
    // The restore point the run made: the newest naming it (the list is newest first).
    const point = page.items.find((p) => p.run_id === ask.runId);
    if (point) context.facts.push(...restorePointFacts(point));
    else context.notes.push(`no restore point of run #${ask.runId} among the app's ${RESTORE_POINTS_PAGE} newest`);
  }

  /**
   * One read, or the note that says why not: a lasting refusal remembered costs no request; a
   * new refusal is logged once per cause (and remembered when lasting); any other failure is
   * noted as it is. Undefined when there is no answer; aborted: nothing noted.
   */
  async #read<T>(fn: ReadFn, { ask, context, pass }: Reading, call: () => Promise<T>): Promise<T | undefined> {
    const remembered = this.#remembered(fn) ?? this.#remembered(`${fn}:${ask.appId}`);
    if (remembered) {
      context.notes.push(remembered);
      return undefined;
    }
    pass.requests += 1;
    try {
      return await call();
    } catch (err) {
      // Stopped by the caller (shutdown): not a failure of the read; it is asked again.
      if (err instanceof ApiTransportError && err.reason === 'aborted') return undefined;
      context.notes.push(this.#refusal(fn, ask, err));
      return undefined;
    }
  }

  /** The note of a failed read, logged once per cause and remembered when it lasts. */
  #refusal(fn: ReadFn, ask: RunContextAsk, err: unknown): string {
    const what = WHAT[fn];
    // The code is the service's word: own keys only.
    const refused = err instanceof ApiError ? ownValue(REFUSED, err.code) : undefined;
    if (!(err instanceof ApiError) || !refused) {
      const note = `${what} not read: ${describeError(err)}`;
      this.#warnOnce(`${fn}:${err instanceof ApiError ? err.code : 'failed'}`, { fn, app: ask.appId, err }, note);
      return note;
    }
    const note = `${what} not available: ${refused(FUNCTIONS[fn].permission)} (${err.code})`;
    if (LASTING.has(err.code)) {
      const key = err.code === 'function_not_allowed' ? fn : `${fn}:${ask.appId}`;
      this.#refused.set(key, { note, until: this.#p.clock.now() + REFUSAL_MEMORY_MS });
    }
    this.#warnOnce(`${fn}:${err.code}`, { fn, app: ask.appId, code: err.code }, `${note}; alerts say so instead`);
    return note;
  }

  /** The note of a lasting refusal still remembered under `key`; a refusal whose hour is over is forgotten. */
  #remembered(key: string): string | undefined {
    const refusal = this.#refused.get(key);
    if (refusal && this.#p.clock.now() < refusal.until) return refusal.note;
    this.#refused.delete(key);
    return undefined;
  }

  #warnOnce(cause: string, fields: Record<string, unknown>, msg: string): void {
    if (this.#warned.has(cause)) return;
    this.#warned.add(cause);
    this.#log.warn(fields, msg);
  }
}
