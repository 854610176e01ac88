/**
 * `deploy-watchdog check`: one cycle of every enabled job (or one), the notifications it makes
 * delivered, then exit: 0 every source read completely, 1 some source could not be, 2 bad config
 * or usage (a configured namespace the token does not reach counts as bad config).
 */
import { Watchdog, type CycleReport } from '../app/watchdog.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import { StoreError } from '../state/store.js';
import { EXIT, UsageError, type Command } from './command.js';
import { daemonLogger } from './daemon-logger.js';
import { loadCommandConfig } from './cli-helpers.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog check [--config FILE] [--job NAME]

Runs one cycle of every enabled job (or only --job NAME), delivers the notifications it makes,
prints one line per job, and exits: 0 when every source was read completely, 1 when one could not
be, 2 for a bad configuration or usage. Logs go to standard error.

  --config FILE   the configuration file
                  (${CONFIG_FILE_DEFAULTS})
  --job NAME      only this job (${JOB_NAMES.join(', ')})`;

/** Time given to delivering what the cycle queued before exiting. */
const DELIVER_DEADLINE_MS = 15_000;

const check: Command = {
  name: 'check',
  summary: 'Run one cycle of every job and exit',
  usage,
  async run(argv, io) {
    const loaded = loadCommandConfig(argv, io, usage, { job: { type: 'string' } }, (values) => {
      if (values.job !== undefined && !(JOB_NAMES as string[]).includes(values.job)) {
        throw new UsageError(`unknown job "${values.job}" (jobs: ${JOB_NAMES.join(', ')})`);
      }
    });
    if (typeof loaded === 'number') return loaded;
    const { config, commandConfigFile } = loaded;
    const job = loaded.values.job;

    const logger = daemonLogger(config, io.stderr);
    let watchdog: Watchdog;
    try {
      watchdog = Watchdog.open({ config, logger, commandConfigFile });
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      io.stderr.write(`error: ${err.message}\n`);
      return EXIT.incomplete;
    }
    let report: CycleReport | undefined;
    try {
      report = await watchdog.runOnce(job === undefined ? undefined : [job]);
    } finally {
      // Stopping delivers what the cycle queued (within the deadline) and closes the database.
      const stopped = await watchdog.stop(DELIVER_DEADLINE_MS);
      io.stdout.write(summary(report, stopped.flush?.sent ?? 0, stopped.flush?.waiting ?? 0));
    }
    if (report.configProblem) return EXIT.usage;
    return report.complete ? EXIT.ok : EXIT.incomplete;
  },
};

/** One line per job, then a total. */
function summary(report: CycleReport | undefined, sent: number, waiting: number): string {
  if (!report) return '';
  if (report.jobs.length === 0) return 'no job enabled (every job is "off" or has no enabled check)\n';
  const width = Math.max(...report.jobs.map((j) => j.job.length));
  const lines = report.jobs.map((j) => {
    const what =
      j.outcome === 'ok'
        ? `ok: ${j.findings} finding${j.findings === 1 ? '' : 's'}, ${j.events} event${j.events === 1 ? '' : 's'}`
        : `${j.outcome}: ${j.reason ?? 'unknown'}`;
    return `${j.job.padEnd(width)}  ${what}`;
  });
  const ok = report.jobs.filter((j) => j.outcome === 'ok').length;
  lines.push(
    `${ok} of ${report.jobs.length} job${report.jobs.length === 1 ? '' : 's'} complete; ${report.events} event${report.events === 1 ? '' : 's'} written; ` +
      `${sent} notification${sent === 1 ? '' : 's'} sent${waiting > 0 ? `, ${waiting} still waiting in the outbox` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}

export default check;
