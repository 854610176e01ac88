import { Watchdog, type WatchdogOptions } from '../app/watchdog.js';
import { configWarnings } from '../config/config-warnings.js';
import { LeaseHeldError } from '../state/runner-lease.js';
import { StoreError } from '../state/store-error.js';
import { EXIT } from './command.js';

/**
 * Opens the watchdog a command runs (`run`, `check`) under its runner lease, once the config's
 * warnings are logged. A lease another process holds is bad usage (2), a state that cannot be
 * opened an incomplete run (1): `fail` tells it as the command speaks, and the exit code is
 * answered instead of the watchdog.
 */
export function openWatchdog(
  options: WatchdogOptions,
  fail: (err: LeaseHeldError | StoreError) => void,
): Watchdog | number {
  for (const w of configWarnings(options.config)) options.logger.warn({ key: w.path }, w.message);
  try {
    return Watchdog.open(options);
  } catch (err) {
    if (!(err instanceof LeaseHeldError) && !(err instanceof StoreError)) throw err;
    fail(err);
    return err instanceof LeaseHeldError ? EXIT.usage : EXIT.incomplete;
  }
}
