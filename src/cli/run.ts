/**
 * `deploy-watchdog run`: the long-lived daemon. SIGTERM or SIGINT (the CLI's stop signal) finishes
 * the cycle in progress within a deadline, delivers what is due, closes the database and exits 0.
 * SIGHUP reloads the configuration file: an invalid file is refused with every problem logged, and
 * the running configuration is kept. A SIGHUP that comes while the daemon is still starting is kept
 * and applied once it has started (see `hangups.ts`), never fatal.
 */
import { NamespaceError } from '../collectors/resolve-namespaces.js';
import type { Watchdog } from '../app/watchdog.js';
import { ListenError } from '../app/health-listener.js';
import type { Logger } from '../lib/logger.js';
import { ConfigError } from '../config/config-error.js';
import { configWarnings } from '../config/config-warnings.js';
import { parseDuration } from '../config/duration.js';
import { formatDuration } from '../lib/format-duration.js';
import { errorText } from '../lib/error-text.js';
import { loadConfig, type Config } from '../config/load-config.js';
import { LeaseHeldError } from '../state/runner-lease.js';
import { EXIT, type CliIo } from './command.js';
import { daemonLogger } from './daemon-logger.js';
import { openWatchdog } from './open-watchdog.js';
import { STOP_GRACE_MS } from './exit-deadline.js';
import { Hangups } from './hangups.js';
import { defineCommand, loadCommandConfig, optionValue } from './cli-helpers.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog run [--config FILE] [--stop-timeout DURATION]

Runs the watchdog until SIGTERM or SIGINT. Logs go to standard output (JSON, or readable on a
terminal; see log.format). SIGHUP reloads FILE; an invalid file is refused and the running
configuration kept.

  --config FILE            the configuration file
                           (${CONFIG_FILE_DEFAULTS})
  --stop-timeout DURATION  how long a stop may take to finish the cycle in progress and deliver
                           what is due (default 10s); the process is ended 2s after it at the
                           latest, whatever it still waits on`;

const DEFAULT_STOP_MS = 10_000;

const run = defineCommand({
  usage,
  options: { 'stop-timeout': { type: 'string' } },
  parse: ({ values: { 'stop-timeout': text } }) =>
    text === undefined ? DEFAULT_STOP_MS : optionValue('--stop-timeout', () => parseDuration(text)),
  async run(stopMs, io, file) {
    // A SIGHUP from now on is kept as a reload for when the daemon is up, never the signal's
    // default (exit). bin.ts has been listening since the process started (so while the command
    // line was read, too).
    const hangups = io.hangups ?? new Hangups(process);
    try {
      return await runDaemon(file, stopMs, io, hangups);
    } finally {
      hangups.close();
    }
  },
});

/** The command once SIGHUPs are kept: load, open, start, serve until stopped. */
async function runDaemon(file: string, stopMs: number, io: CliIo, hangups: Hangups): Promise<number> {
  const { config, commandConfigFile } = loadCommandConfig(file, io);

  const logger = daemonLogger(config, io.stdout);
  // Whatever the stop waits on (a store, an SMTP server, a peer), the process is gone soon after its timeout.
  const exitBy = () =>
    io.exitBy?.(stopMs + STOP_GRACE_MS, (ms) =>
      logger.fatal({ after: formatDuration(ms, 'exact') }, 'the stop did not end the process in time; exiting now'),
    );
  void stopped(io.signal).then(exitBy);
  const watchdog = openWatchdog({ config, logger, commandConfigFile, lease: 'run' }, (err) =>
    err instanceof LeaseHeldError
      ? logger.fatal({ holder: err.holder }, err.message)
      : logger.fatal({ err: err.message }, 'cannot open the state file'),
  );
  if (typeof watchdog === 'number') return watchdog;
  // A stop asked for while starting (whoami may be waiting out its retries) ends the start at once.
  const interruptStart = () => watchdog.interrupt('stopped while starting');
  io.signal.addEventListener('abort', interruptStart, { once: true });
  try {
    await watchdog.start();
  } catch (err) {
    await watchdog.stop(stopMs);
    if (err instanceof NamespaceError) {
      logger.fatal({ err: err.message }, 'configuration does not fit the token');
      return EXIT.usage;
    }
    if (err instanceof ListenError) {
      logger.fatal(err.message);
      return EXIT.incomplete;
    }
    throw err;
  } finally {
    io.signal.removeEventListener('abort', interruptStart);
  }

  // Reloads run one at a time, and a stop waits for the one in progress. A SIGHUP that came
  // while starting is delivered now. A burst coalesces: while one reload waits its turn, more
  // SIGHUPs join it (it reads the file when it starts, so it sees every change they announce);
  // only one that comes once a reload has started queues another.
  let reloading: Promise<void> = Promise.resolve();
  let waiting = false;
  hangups.onHangup(() => {
    if (waiting) {
      logger.debug('SIGHUP: joins the reload already waiting');
      return;
    }
    waiting = true;
    // Never rejects: a rejected chain would skip every later reload and end the process.
    reloading = reloading
      .then(() => {
        waiting = false;
        return reload(file, io, watchdog, logger, config.log.format);
      })
      .catch((err: unknown) => {
        logger.error({ err: errorText(err) }, 'reload failed; the running configuration is kept');
        return false;
      })
      .then((applied) => watchdog.metrics.configReloadSuccessful.set(applied ? 1 : 0));
  });
  // Another process took the state file over (this one stalled past its lease): stop, exit 1.
  const ended = AbortSignal.any([io.signal, watchdog.lost]);
  await stopped(ended);
  logger.info(
    {
      reason: String((ended.reason as Error | undefined)?.message ?? 'stop'),
      deadline: formatDuration(stopMs, 'exact'),
    },
    'stopping',
  );
  // Still listening, so a SIGHUP while stopping is ignored rather than killing the stop half-way.
  hangups.onHangup(() => logger.info('SIGHUP while stopping: ignored'));
  await reloading;
  await watchdog.stop(stopMs);
  return watchdog.lost.aborted ? EXIT.incomplete : EXIT.ok;
}

/** Loads the file again; every problem of an invalid one is logged and the running config kept (false). */
async function reload(
  file: string,
  io: CliIo,
  watchdog: Watchdog,
  logger: Logger,
  startedFormat: Config['log']['format'],
): Promise<boolean> {
  logger.info({ file }, 'SIGHUP: reloading the configuration');
  let next: Config;
  try {
    next = loadConfig(file, io.env);
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : undefined;
    for (const p of problems ?? []) {
      logger.error({ file, key: p.path || undefined, line: p.line, problem: p.message }, 'configuration problem');
    }
    const why = problems ? { problems: problems.length } : { err: errorText(err) };
    logger.error({ file, ...why }, 'configuration refused; the running configuration is kept');
    return false;
  }
  for (const w of configWarnings(next)) logger.warn({ file, key: w.path }, w.message);
  try {
    await watchdog.reload(next);
    // The log's stream is made once: say so rather than ignore the edit.
    if (next.log.format !== startedFormat) logger.warn('log.format changed: it takes effect at the next restart');
    daemonLogger.apply(logger, next.log);
    return true;
  } catch (err) {
    logger.error({ err: errorText(err) }, 'reload failed; the running configuration is kept');
    return false;
  }
}

function stopped(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export default run;
