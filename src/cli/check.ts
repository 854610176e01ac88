/**
 * `deploy-watchdog check`: one cycle of exactly what `run` does, once — every enabled job (or
 * one) in the daemon's order, remediation included (what the cycle planned is sent, the answers
 * recorded, runs started by an earlier `check` followed), new alerts' context read (their log, their
 * restore point), the notifications delivered — then exit:
 * 0 every source read completely, 1 some source could not be, 2 bad config or usage (a configured
 * namespace the token does not reach counts as bad config). Running it from cron or a Kubernetes
 * CronJob is a supported way to deploy.
 */
import type { QuarantinedRecord } from '../api/quarantine.js';
import { recordExample } from '../alerts/skipped-records.js';
import type { JobReport } from '../app/job-cycle.js';
import type { UnknownStateWord } from '../app/unknown-state-words.js';
import type { CycleReport } from '../app/watchdog.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import type { Config } from '../config/load-config.js';
import type { FlushReport } from '../notify/delivery.js';
import type { PassReport } from '../remediation/send-and-follow.js';
import { listAudit, type AuditRow } from '../remediation/remediation-store.js';
import { EXIT, UsageError } from './command.js';
import { daemonLogger } from './daemon-logger.js';
import { openWatchdog } from './open-watchdog.js';
import { defineCommand, loadCommandConfig, table, terminalSafe } from './cli-helpers.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog check [--config FILE] [--job NAME]

Runs one cycle of every enabled job (or only --job NAME), exactly as the daemon does: servers
first, remediation included (changes the policies allow are sent with their idempotency keys, and
runs started by an earlier check are followed). Delivers the notifications it makes, prints one line
per job and what remediation did, and exits: 0 when every source was read completely, 1 when one
could not be, 2 for a bad configuration or usage. Logs go to standard error.

  --config FILE   the configuration file
                  (${CONFIG_FILE_DEFAULTS})
  --job NAME      only this job (${JOB_NAMES.join(', ')})`;

/** Time given to delivering what the cycle queued before exiting. */
const DELIVER_DEADLINE_MS = 15_000;
/** …and when a signal asked it to stop: what is not sent stays in the outbox. */
const STOPPED_DELIVER_DEADLINE_MS = 1_000;

const check = defineCommand({
  usage,
  options: { job: { type: 'string' } },
  parse: ({ values }) => {
    const job = JOB_NAMES.find((name) => name === values.job);
    if (values.job !== undefined && job === undefined) {
      throw new UsageError(`unknown job "${values.job}" (jobs: ${JOB_NAMES.join(', ')})`);
    }
    return job;
  },
  async run(job, io, file) {
    const { config, commandConfigFile } = loadCommandConfig(file, io);

    const logger = daemonLogger(config, io.stderr);
    const watchdog = openWatchdog({ config, logger, commandConfigFile, lease: 'check' }, (err) =>
      io.stderr.write(`error: ${err.message}\n`),
    );
    if (typeof watchdog === 'number') return watchdog;
    let report: CycleReport | undefined;
    let remediation: PassReport | undefined;
    let audit: AuditRow[] = [];
    // SIGTERM or SIGINT (cron, a Kubernetes CronJob, Ctrl-C): end the reads at once; what the
    // outbox holds is sent by the next check or the daemon.
    const onStop = () => watchdog.interrupt('stopped by a signal');
    io.signal.addEventListener('abort', onStop, { once: true });
    try {
      const before = listAudit(watchdog.store, { limit: 1 })[0]?.id ?? 0;
      await watchdog.learnScope();
      report = await watchdog.runOnce(job === undefined ? undefined : [job]);
      remediation = await watchdog.remediateOnce();
      // The audit rows this check wrote, oldest first.
      audit = listAudit(watchdog.store, { limit: AUDIT_ROWS_SHOWN + 1 }).filter((r) => r.id > before);
      // The log and restore point of new alerts, read before their messages go (bounded by notify.context.wait).
      await watchdog.readContext();
    } finally {
      io.signal.removeEventListener('abort', onStop);
      // Stopping delivers what the cycle queued (within the deadline) and closes the database.
      const stopped = await watchdog.stop(io.signal.aborted ? STOPPED_DELIVER_DEADLINE_MS : DELIVER_DEADLINE_MS);
      io.stdout.write(summary(report, stopped.flush));
      if (report) io.stdout.write(remediationSummary(remediation, audit, config.remediation));
    }
    if (report.configProblem) return EXIT.usage;
    return report.complete ? EXIT.ok : EXIT.incomplete;
  },
});

/** One line per job, then a total. */
function summary(report: CycleReport | undefined, flush: Partial<FlushReport> | undefined): string {
  if (!report) return '';
  if (report.jobs.length === 0) return 'no job enabled (every job is "off" or has no enabled check)\n';
  const width = Math.max(...report.jobs.map((j) => j.job.length));
  const lines = report.jobs.map((j) => {
    const what =
      j.outcome === 'ok'
        ? `ok: ${j.findings} finding${j.findings === 1 ? '' : 's'}, ${j.events} event${j.events === 1 ? '' : 's'}` +
          unknownStatesNote(j.unknownStates) +
          skippedNote(j.skipped)
        : `${j.outcome}: ${terminalSafe(j.reason ?? 'unknown')}` + (j.outcome === 'partial' ? partialNote(j) : '');
    return `${j.job.padEnd(width)}  ${what}`;
  });
  const ok = report.jobs.filter((j) => j.outcome === 'ok').length;
  // Complete jobs may still have set records aside: the last line says so, read alone.
  const skipped = report.jobs.reduce((n, j) => n + (j.skipped?.length ?? 0), 0);
  const { sent = 0, waiting = 0, held = 0 } = flush ?? {};
  lines.push(
    `${ok} of ${report.jobs.length} job${report.jobs.length === 1 ? '' : 's'} complete` +
      (skipped > 0 ? `, ${skipped} record${skipped === 1 ? '' : 's'} set aside (their alerts held)` : '') +
      `; ${report.events} event${report.events === 1 ? '' : 's'} written; ` +
      `${sent} notification${sent === 1 ? '' : 's'} sent${waiting > 0 ? `, ${waiting} still waiting in the outbox` : ''}` +
      (held > 0 ? `, ${held} held back (a silence, a mute window, an inhibition or a repeat's interval)` : ''),
  );
  return `${lines.join('\n')}\n`;
}

/** What a read cut by a hard bound still did with what it read. */
function partialNote(j: JobReport): string {
  return `; from what it read: ${j.findings} finding${j.findings === 1 ? '' : 's'}, ${j.events} event${j.events === 1 ? '' : 's'} (nothing resolved)`;
}

/**
 * The state words no `checks.*` list names, as the service wrote them, after their kind of record
 * (a job's words of one kind come together); the log says which lists.
 */
function unknownStatesNote(unknown: UnknownStateWord[] = []): string {
  let note = '';
  for (const [i, u] of unknown.entries()) {
    note += unknown[i - 1]?.record === u.record ? ', ' : `; ${u.record} states no checks.* list names: `;
    note += `${terminalSafe(JSON.stringify(u.word))} ×${u.count}`;
  }
  return note;
}

/** The records the read set aside, by reason, with an example: the rest of the read is complete. */
function skippedNote(skipped: readonly QuarantinedRecord[] | undefined): string {
  if (!skipped || skipped.length === 0) return '';
  const first = skipped[0]!;
  const example = `${recordExample(first)}: ${terminalSafe(first.detail)}`;
  return `; ${skipped.length} record${skipped.length === 1 ? '' : 's'} set aside, alerts held (e.g. ${example})`;
}

/** Audit rows a check writes at most are listed; more is said as a count (the `actions` command has them all). */
const AUDIT_ROWS_SHOWN = 50;

/**
 * What remediation did in this check: a line of counts, then the audit rows it wrote (decisions,
 * answers, outcomes), so a check run from cron leaves the same trace in its log as `actions` shows.
 */
function remediationSummary(done: PassReport | undefined, rows: readonly AuditRow[], settings: Config['remediation']) {
  if (!done && rows.length === 0) {
    return settings.policies.length === 0 ? '' : 'remediation: no policy applied\n';
  }
  const pass = done ?? { sent: 0, polled: 0, finished: 0 };
  const mode = !settings.enabled
    ? ' (remediation.enabled is false: nothing is sent)'
    : settings.dry_run
      ? ' (dry run: nothing is sent)'
      : '';
  const head = `remediation${mode}: ${pass.sent} change${pass.sent === 1 ? '' : 's'} sent, ${pass.polled} run${pass.polled === 1 ? '' : 's'} followed, ${pass.finished} finished`;
  if (rows.length === 0) return `${head}\n`;
  const shown = rows.slice(-AUDIT_ROWS_SHOWN);
  const body = shown.map((r) => [
    `  ${r.policy}`,
    r.action,
    r.recordType === null ? '-' : `${r.recordType} #${r.recordId}`,
    r.decision,
    r.answer ?? r.outcome ?? '-',
    r.key ?? '-',
    r.runId === null ? '-' : `run #${r.runId}`,
    r.reason,
  ]);
  const more = rows.length > shown.length ? `  … and more: deploy-watchdog actions\n` : '';
  return `${head}\n${table(body)}${more}`;
}

export default check;
