/**
 * The demo's daemon: the real composition root (`Watchdog`) built from the demo config, with the
 * real remediation stage plugged in, started as `run` would start it. Kept in one file so the demo
 * has exactly one place that knows how the daemon is assembled.
 */
import type { Logger } from '../app/logger.js';
import type { RemediationFactory } from '../app/remediation-hook.js';
import { Watchdog } from '../app/watchdog.js';
import type { Config } from '../config/load-config.js';
import type { Clock } from '../lib/clock.js';
import { createRemediator } from '../remediation/remediator.js';
import { SUCCEEDED_RUN_STATES } from '../simulator/vocabulary.js';

/** A started daemon. */
export interface DemoDaemon {
  /** Stops it: cycles in progress finish, what is due is delivered, within `deadlineMs`. */
  stop(deadlineMs: number): Promise<void>;
}

/** What the demo daemon is built with. */
export interface DemoDaemonDeps {
  clock: Clock;
  logger: Logger;
  /**
   * How often remediation polls a run it started. The daemon's default (30 s) suits runs that take
   * minutes; in the demo a retried run finishes within seconds and its outcome should show then.
   */
  followPollMs: number;
}

/**
 * The remediation stage as `createRemediation` builds it, with a faster follow poll. The demo's
 * state file is new, so the "nothing to do" shortcut of `createRemediation` never applies.
 */
function demoRemediation(followPollMs: number): RemediationFactory {
  return ({ config, client, store, notifier, clock, logger, metrics }) =>
    createRemediator({
      store,
      client,
      settings: config.remediation,
      runStates: {
        failed: config.checks.failed_runs.failed_states,
        active: config.checks.stuck_runs.active_states,
        succeeded: SUCCEEDED_RUN_STATES,
      },
      notifier,
      clock,
      logger,
      metrics,
      pollIntervalMs: followPollMs,
    });
}

/** Builds the daemon from the config and starts it (first cycle of every job included). */
export async function startDemoDaemon(config: Config, deps: DemoDaemonDeps): Promise<DemoDaemon> {
  const watchdog = Watchdog.open({ config, logger: deps.logger, clock: deps.clock, remediation: demoRemediation(deps.followPollMs) });
  try {
    await watchdog.start();
  } catch (err) {
    await watchdog.stop(0).catch(() => undefined);
    throw err;
  }
  return {
    async stop(deadlineMs) {
      await watchdog.stop(deadlineMs);
    },
  };
}
