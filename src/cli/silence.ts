/**
 * `deploy-watchdog silence`: mutes delivery of alerts whose labels match, for a while. The alerts
 * are still tracked; only their notifications are held back while the silence is in force.
 */
import { alertStoreOf } from '../alerts/alert-store.js';
import { parseMatcher } from '../alerts/matchers.js';
import { alertsMatching } from '../alerts/silence-listing.js';
import { silenceWarnings } from '../alerts/silence-warnings.js';
import { createSilence, describeMatchers } from '../alerts/silences.js';
import { parseDuration } from '../config/duration.js';
import { formatDuration } from '../lib/format-duration.js';
import { systemClock } from '../lib/clock.js';
import { actingPerson, defineCommand, optionValue, terminalSafe, withStateStore } from './cli-helpers.js';
import { formatUtc } from '../lib/format-utc.js';
import { parseTime } from '../lib/parse-time.js';
import { EXIT, UsageError } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog silence [--config FILE] --match LABEL=VALUE [--match …]
         (--for DURATION | --end TIME) [--start TIME] --reason TEXT [--by NAME]

Mutes notifications of alerts whose labels match every --match, for DURATION (e.g. 2h, 30m, 1d)
or until TIME, from now or from --start TIME: a maintenance window planned ahead, which mutes
nothing before its start (\`silences\` shows it as scheduled). The alerts are still tracked.
When the silence ends, an alert still firing is announced once; one that ended under the silence
stays quiet. TIME is ISO 8601 with its zone: 2026-11-28T02:00:00Z, 2026-11-28T03:00+01:00.
Prints the silence id (for \`deploy-watchdog unsilence\`), how many open alerts it matches now, and
a warning for a --match that names a label no alert has, or a value no alert so far has (a typo,
most likely; the silence is made all the same, for an alert still to come).

  --config FILE     the configuration file (its state.path is the database)
                    (${CONFIG_FILE_DEFAULTS})
  --match M         LABEL=VALUE, LABEL!=VALUE, LABEL=~REGEX or LABEL!~REGEX; repeat to narrow
                    (labels: check, namespace, project, environment_type, app, server, …)
  --for DURATION    how long the silence lasts; must be more than zero
  --start TIME      when it starts (default: now)
  --end TIME        when it ends, instead of --for; must be after its start
  --reason TEXT     why, for whoever sees the silence later
  --by NAME         who; defaults to $USER (required where $USER is unset); --author too`;

const silence = defineCommand({
  usage,
  options: {
    match: { type: 'string', multiple: true },
    for: { type: 'string' },
    start: { type: 'string' },
    end: { type: 'string' },
    reason: { type: 'string' },
    by: { type: 'string' },
    author: { type: 'string' },
  },
  parse: ({ values }) => {
    const now = systemClock.now();
    const matches = values.match ?? [];
    if (matches.length === 0) throw new UsageError('at least one --match is required');
    const startsAt = values.start === undefined ? undefined : timeOption('--start', values.start);
    const durationMs = silenceLength(values.for, values.end, startsAt ?? now);
    const reason = (values.reason ?? '').trim();
    if (!reason) throw new UsageError('--reason TEXT is required');
    // A pasted "To silence" line carries '…' for the reason: say why instead.
    if (reason === '…' || reason === '...')
      throw new UsageError(`--reason '…' is the placeholder of a printed command: write why you silence`);
    if (values.by !== undefined && values.author !== undefined)
      throw new UsageError('give --by or --author, not both (they are the same)');
    return {
      now,
      matchers: matches.map((m) => optionValue('--match', () => parseMatcher(m))),
      startsAt,
      durationMs,
      reason,
      by: values.by ?? values.author,
    };
  },
  run: (args, io, file) =>
    withStateStore(io, file, (store) => {
      const { now } = args;
      // Asked once the config is found, so a missing config is what a bare command hears first.
      const created = createSilence(store, { ...args, createdBy: actingPerson(args.by, io.env) });
      io.stdout.write(`${created.id}\n`);
      const open = alertsMatching(store, created.matchers).length;
      // To the second: a start or an end given as a time leaves milliseconds nobody asked for.
      const lasting = formatDuration(Math.round((created.endsAt - created.startsAt) / 1000) * 1000, 'exact');
      // A start already past mutes from now, as Alertmanager's does: said, not silently moved.
      const pastStart = args.startsAt !== undefined && args.startsAt < now ? ' (its --start is past: from now)' : '';
      // Label values are the service's text (the console and Slack make such silences): shown, never obeyed.
      const matchers = terminalSafe(describeMatchers(created.matchers));
      const when =
        created.startsAt > now
          ? `scheduled: silences ${matchers} from ${formatUtc(created.startsAt, 'iso')} ` +
            `(in ${formatDuration(created.startsAt - now)}) for ${lasting}, until ${formatUtc(created.endsAt, 'iso')}; ` +
            `it mutes nothing before then`
          : `silenced ${matchers}${pastStart} for ${lasting}, until ${formatUtc(created.endsAt, 'iso')}`;
      io.stderr.write(`${when}; it matches ${open} open alert${open === 1 ? '' : 's'} now\n`);
      // Label values are the service's text: shown, never obeyed by the terminal.
      for (const w of silenceWarnings(created.matchers, alertStoreOf(store).labelValues())) {
        io.stderr.write(`warning: ${terminalSafe(w)}\n`);
      }
      return EXIT.ok;
    }),
});

/** A time option: ISO 8601 with its zone (`parseTime` never guesses a time without one). */
function timeOption(flag: string, text: string): number {
  const at = parseTime(text.trim());
  if (at === null) {
    throw new UsageError(
      `${flag}: ${JSON.stringify(text)} is not a time with its zone; write e.g. 2026-11-28T02:00:00Z or 2026-11-28T03:00+01:00`,
    );
  }
  return at;
}

/** How long the silence lasts from `from`: `--for`, or up to `--end` (exactly one of them). */
function silenceLength(forText: string | undefined, endText: string | undefined, from: number): number {
  if (forText !== undefined && endText !== undefined) throw new UsageError('give --for or --end, not both');
  if (endText !== undefined) {
    const end = timeOption('--end', endText);
    if (end <= from) throw new UsageError(`--end must be after the start (${formatUtc(from, 'iso')})`);
    return end - from;
  }
  if (!forText) throw new UsageError('--for DURATION (or --end TIME) is required');
  const durationMs = optionValue('--for', () => parseDuration(forText));
  if (durationMs <= 0) throw new UsageError(`--for must be more than zero, got ${JSON.stringify(forText)}`);
  return durationMs;
}

export default silence;
