import type { CycleStage } from '../alerts/commit-findings.js';
import type { ApiClient } from '../api/client.js';
import type { Config } from '../config/load-config.js';
import type { Clock } from '../lib/clock.js';
import type { Notifier } from '../notify/notifier.js';
import type { Metrics } from '../server/metrics.js';
import type { Store } from '../state/store.js';
import type { Logger } from '../lib/logger.js';

/**
 * The seam remediation plugs into: a stage of `commitFindings` (`take`, inside every completed
 * cycle's transaction, so a decision to act commits with the alert state or not at all), and starts and stops it with the daemon. Acting (sending `runs.retry`, following
 * the run) belongs in its own loop started by `start`, never inside the transaction.
 */
export interface RemediationHook extends CycleStage {
  /**
   * One pass of the action loop, now: sends the changes the cycles planned (with their stored
   * keys), records the answers, polls the runs being followed. `check` calls it after its cycle,
   * where no loop runs, so one `check` does what the daemon's cycle does.
   */
  executePending(signal?: AbortSignal): Promise<RemediationPass>;
  /** Starts whatever runs in the background (the action loop). */
  start(): void;
  /** Stops it, finishing or abandoning work within `deadlineMs`. */
  stop(deadlineMs: number): Promise<void>;
}

/** What one pass of the action loop did. */
export interface RemediationPass {
  /** Change requests sent. */
  sent: number;
  /** Polls of followed runs. */
  polled: number;
  /** Attempts that reached an outcome. */
  finished: number;
}

/** What a remediation is built from: one running configuration's parts. */
export interface RemediationDeps {
  config: Config;
  client: ApiClient;
  store: Store;
  notifier: Notifier;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

/**
 * Builds the remediation for a configuration, or undefined when it is off. Called at start and at
 * every reload (the old one is stopped first).
 */
export type RemediationFactory = (deps: RemediationDeps) => RemediationHook | undefined;
