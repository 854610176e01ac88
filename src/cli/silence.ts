/**
 * `deploy-watchdog silence`: mutes delivery of alerts whose labels match, for a while. The alerts
 * are still tracked; only their notifications are held back while the silence is in force.
 */
import { knownLabelValues, openAlerts } from '../alerts/alert-store.js';
import { compileMatchers, parseMatcher, type LabelMatcher } from '../alerts/matchers.js';
import { silenceWarnings } from '../alerts/silence-warnings.js';
import { createSilence, describeMatchers } from '../alerts/silences.js';
import { parseDuration } from '../config/duration.js';
import { formatDuration } from '../lib/format-duration.js';
import { systemClock } from '../lib/clock.js';
import { parseCommandArgs, reportFailure, terminalSafe, withStateStore } from './cli-helpers.js';
import { EXIT, UsageError, type Command } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog silence [--config FILE] --match LABEL=VALUE [--match …] --for DURATION --reason TEXT [--author NAME]

Mutes notifications of alerts whose labels match every --match, for DURATION (e.g. 2h, 30m, 1d).
The alerts are still tracked. When the silence ends, an alert still firing is announced once;
one that ended under the silence stays quiet.
Prints the silence id (for \`deploy-watchdog unsilence\`), how many open alerts it matches now, and
a warning for a --match that names a label no alert has, or a value no alert so far has (a typo,
most likely; the silence is made all the same, for an alert still to come).

  --config FILE     the configuration file (its state.path is the database)
                    (${CONFIG_FILE_DEFAULTS})
  --match M         LABEL=VALUE, LABEL!=VALUE, LABEL=~REGEX or LABEL!~REGEX; repeat to narrow
                    (labels: check, namespace, project, environment_type, app, server, …)
  --for DURATION    how long the silence lasts; must be more than zero
  --reason TEXT     why, for whoever sees the silence later
  --author NAME     who; defaults to $USER`;

const silence: Command = {
  name: 'silence',
  summary: 'Mute notifications of matching alerts for a while',
  usage,
  async run(argv, io) {
    let args: { config?: string; match: LabelMatcher[]; durationMs: number; reason: string; author: string };
    try {
      const { values } = parseCommandArgs(argv, {
        config: { type: 'string' },
        match: { type: 'string', multiple: true },
        for: { type: 'string' },
        reason: { type: 'string' },
        author: { type: 'string' },
      });
      const matches = values.match ?? [];
      if (matches.length === 0) throw new UsageError('at least one --match is required');
      const forText = values.for;
      if (!forText) throw new UsageError('--for DURATION is required');
      let durationMs: number;
      try {
        durationMs = parseDuration(forText);
      } catch (err) {
        throw new UsageError(`--for: ${(err as Error).message}`);
      }
      if (durationMs <= 0) throw new UsageError(`--for must be more than zero, got ${JSON.stringify(forText)}`);
      const reason = (values.reason ?? '').trim();
      if (!reason) throw new UsageError('--reason TEXT is required');
      // A pasted "To silence" line carries '…' for the reason: say why instead.
      if (reason === '…' || reason === '...')
        throw new UsageError(`--reason '…' is the placeholder of a printed command: write why you silence`);
      const author = (values.author ?? io.env.USER ?? io.env.LOGNAME ?? '').trim() || 'unknown';
      args = {
        config: values.config,
        match: matches.map((m) => {
          try {
            return parseMatcher(m);
          } catch (err) {
            throw new UsageError(`--match: ${(err as Error).message}`);
          }
        }),
        durationMs,
        reason,
        author,
      };
    } catch (err) {
      return reportFailure(io, usage, err);
    }

    return withStateStore(io, usage, args.config, (store) => {
      const created = createSilence(store, {
        matchers: args.match,
        durationMs: args.durationMs,
        reason: args.reason,
        createdBy: args.author,
        now: systemClock.now(),
      });
      io.stdout.write(`${created.id}\n`);
      const matches = compileMatchers(created.matchers);
      const open = openAlerts(store).filter((a) => matches(a.labels)).length;
      io.stderr.write(
        `silenced ${describeMatchers(created.matchers)} for ${formatDuration(args.durationMs, 'exact')}, ` +
          `until ${new Date(created.endsAt).toISOString()}; it matches ${open} open alert${open === 1 ? '' : 's'} now\n`,
      );
      // Label values are the service's text: shown, never obeyed by the terminal.
      for (const w of silenceWarnings(created.matchers, knownLabelValues(store))) {
        io.stderr.write(`warning: ${terminalSafe(w)}\n`);
      }
      return EXIT.ok;
    });
  },
};

export default silence;
