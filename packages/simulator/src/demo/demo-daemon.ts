/**
 * The demo's daemon: the real daemon (`Watchdog`) built from the demo config, remediation
 * included (the demo config's `remediation.poll_interval` makes it read a retried run again within
 * seconds), started as `run` would start it. Kept in one file so the demo has exactly one place that knows how the daemon is
 * assembled.
 */
import type { Logger } from '../../../../src/lib/logger.js';
import { Watchdog } from '../../../../src/app/watchdog.js';
import type { Config } from '../../../../src/config/load-config.js';
import type { Clock } from '../../../../src/lib/clock.js';

/** A started daemon. */
export interface DemoDaemon {
  /** Stops it: cycles in progress finish, what is due is delivered, within `deadlineMs`. */
  stop(deadlineMs: number): Promise<void>;
}

/** What the demo daemon is built with. */
export interface DemoDaemonDeps {
  clock: Clock;
  logger: Logger;
  /** The demo's config file: the commands its messages print name it (it is in a temp folder). */
  configFile: string;
}

/** Builds the daemon from the config and starts it (first cycle of every job included). */
export async function startDemoDaemon(config: Config, deps: DemoDaemonDeps): Promise<DemoDaemon> {
  const watchdog = Watchdog.open({
    config,
    logger: deps.logger,
    clock: deps.clock,
    commandConfigFile: deps.configFile,
  });
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
