/**
 * `deploy-watchdog silence`: mutes delivery of alerts whose labels match, for a while. The alerts
 * are still tracked; only their notifications are held back while the silence is in force.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MatcherError, parseMatcher, type LabelMatcher } from '../alerts/matchers.js';
import { createSilence, describeMatchers, SilenceError } from '../alerts/silences.js';
import { ConfigError } from '../config/config-error.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { loadConfig } from '../config/load-config.js';
import { systemClock } from '../lib/clock.js';
import { Store, StoreError } from '../state/store.js';
import { EXIT, UsageError, type CliIo, type Command } from './command.js';

const usage = `usage: deploy-watchdog silence --config FILE --match LABEL=VALUE [--match …] --for DURATION --reason TEXT [--author NAME]

Mutes notifications of alerts whose labels match every --match, for DURATION (e.g. 2h, 30m, 1d).
The alerts are still tracked. When the silence ends, an alert still firing is announced once;
one that ended under the silence stays quiet.
Prints the silence id (for \`deploy-watchdog unsilence\`).

  --config FILE     the configuration file (its state.path is the database)
  --match M         LABEL=VALUE, LABEL!=VALUE, LABEL=~REGEX or LABEL!~REGEX; repeat to narrow
                    (labels: check, namespace, project, environment_type, app, server, …)
  --for DURATION    how long the silence lasts; must be more than zero
  --reason TEXT     why, for whoever sees the silence later
  --author NAME     who; defaults to $USER`;

/**
 * Runs `body` with the loaded config's state store open, turning the failures every state
 * command shares into exit codes: bad usage or config → 2 (with a message), state unusable → 1.
 */
export async function withStateStore(
  io: CliIo,
  commandUsage: string,
  configPath: string | undefined,
  body: (store: Store) => number | Promise<number>,
): Promise<number> {
  let store: Store | undefined;
  try {
    if (!configPath) throw new UsageError('--config FILE is required');
    const config = loadConfig(configPath, io.env);
    store = Store.open(config.state.path);
    return await body(store);
  } catch (err) {
    return reportFailure(io, commandUsage, err);
  } finally {
    store?.close();
  }
}

/** Prints a command failure the way every state command does and returns its exit code. */
export function reportFailure(io: CliIo, commandUsage: string, err: unknown): number {
  if (err instanceof UsageError || err instanceof MatcherError || err instanceof SilenceError) {
    io.stderr.write(`error: ${err.message}\n\n${commandUsage}\n`);
    return EXIT.usage;
  }
  if (err instanceof ConfigError) {
    io.stderr.write(`configuration is not valid:\n${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof StoreError) {
    io.stderr.write(`error: ${err.message}\n`);
    return EXIT.incomplete;
  }
  throw err;
}

/** Parses argv with node:util parseArgs (strict), turning its errors into {@link UsageError}. */
export function parseCommandArgs<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

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
      io.stderr.write(
        `silenced ${describeMatchers(created.matchers)} for ${formatDuration(args.durationMs)}, ` +
          `until ${new Date(created.endsAt).toISOString()}\n`,
      );
      return EXIT.ok;
    });
  },
};

export default silence;
