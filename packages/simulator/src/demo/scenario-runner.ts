/**
 * Plays a {@link Scenario} against a running simulator in real time: each step at its moment (a
 * fraction of the duration), steps with a condition once it has held long enough, and a look at
 * the service's request log on every tick so the demo can tell which changes the daemon made.
 */
import type { Clock } from '../../../../src/lib/clock.js';
import type { SimulatorControl } from '../simulator-control.js';
import type { RequestRecord } from '../simulator-core.js';
import type { Scenario, ScenarioStep } from './scenario.js';

/** Catalogue functions that change something: what remediation does, as the service saw it. */
const CHANGE_FUNCTIONS = new Set([
  'runs.retry',
  'apps.backup',
  'apps.restart',
  'apps.update',
  'apps.update_modules',
  'apps.maintenance',
]);

/** Options of {@link ScenarioRunner.run}. */
export interface ScenarioRunOptions {
  /** The length of the timeline (ms); step `at` fractions are of this. */
  durationMs: number;
  /**
   * After the timeline: keep ticking until this says everything has been told, or until
   * `settleMs` more has passed, so the last "resolved" is not cut off by the clock.
   */
  settled?: () => boolean;
  settleMs?: number;
  /** How often to look (ms); default 200. */
  tickMs?: number;
  /** Stops the run early (Ctrl-C). */
  signal?: AbortSignal;
}

/** What the runner reports as it goes. */
export interface ScenarioListener {
  /** A step happened, `elapsedMs` after the start. */
  onStep?(step: ScenarioStep, elapsedMs: number): void;
  /** The service answered a change request (a remediation action, typically). */
  onChange?(request: RequestRecord, elapsedMs: number): void;
  /** A step threw (a bad cast, say); the show goes on without it. */
  onStepError?(step: ScenarioStep, err: unknown): void;
}

/** How a run ended. */
export interface ScenarioOutcome {
  /** Steps that happened, in order. */
  done: ScenarioStep[];
  /** Steps that never happened (a condition that never held). */
  pending: ScenarioStep[];
  /** 'completed' (all told), 'settle_timeout' (gave up waiting), 'aborted' (stopped early). */
  ending: 'completed' | 'settle_timeout' | 'aborted';
}

/** Plays one scenario. */
export class ScenarioRunner {
  constructor(
    private readonly scenario: Scenario,
    private readonly control: SimulatorControl,
    private readonly clock: Clock,
    private readonly listener: ScenarioListener = {},
  ) {}

  /** Plays the timeline; resolves when it is over, settled or aborted (never rejects on abort). */
  async run(options: ScenarioRunOptions): Promise<ScenarioOutcome> {
    const start = this.clock.now();
    const tickMs = options.tickMs ?? 200;
    const pending = [...this.scenario.steps].sort((a, b) => a.at - b.at);
    const done: ScenarioStep[] = [];
    /** When each conditional step's condition was first seen holding. */
    const heldSince = new Map<ScenarioStep, number>();
    this.control.resetRequests();

    const tick = () => {
      const elapsed = this.clock.now() - start;
      this.readChanges(elapsed);
      for (const step of [...pending]) {
        if (elapsed < step.at * options.durationMs) continue;
        if (step.when) {
          if (!step.when(this.control)) {
            heldSince.delete(step);
            continue;
          }
          const since = heldSince.get(step) ?? elapsed;
          heldSince.set(step, since);
          if (elapsed - since < (step.holdFor ?? 0) * options.durationMs) continue;
        }
        pending.splice(pending.indexOf(step), 1);
        try {
          step.act(this.control);
          done.push(step);
          this.listener.onStep?.(step, elapsed);
        } catch (err) {
          this.listener.onStepError?.(step, err);
        }
      }
      return elapsed;
    };

    const sleep = async (): Promise<boolean> => {
      try {
        await this.clock.sleep(tickMs, options.signal);
        return true;
      } catch {
        return false;
      }
    };

    if (options.signal?.aborted) return { done, pending, ending: 'aborted' };
    while (tick() < options.durationMs) {
      if (!(await sleep())) return { done, pending, ending: 'aborted' };
    }
    const settleUntil = this.clock.now() + (options.settleMs ?? 0);
    while (!(options.settled?.() ?? true)) {
      if (this.clock.now() >= settleUntil) return { done, pending, ending: 'settle_timeout' };
      if (!(await sleep())) return { done, pending, ending: 'aborted' };
      tick();
    }
    return { done, pending, ending: 'completed' };
  }

  /** Reports change requests answered since the last look, then forgets the log so it stays small. */
  private readChanges(elapsed: number): void {
    const requests = this.control.requests();
    this.control.resetRequests();
    for (const r of requests)
      if (CHANGE_FUNCTIONS.has(r.fn) && r.method === 'POST') this.listener.onChange?.(r, elapsed);
  }
}
