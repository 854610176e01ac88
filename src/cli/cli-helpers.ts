/**
 * What the state commands (alerts, silence, silences, unsilence, ack, unack, actions) and the others that parse
 * arguments share: strict argument parsing, opening the state store from the config, turning
 * their failures into exit codes, and the plain table and time format of listings.
 */
import type { Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AcknowledgeError } from '../alerts/acknowledge.js';
import { MatcherError } from '../alerts/matchers.js';
import { SilenceError } from '../alerts/silences.js';
import { ConfigError } from '../config/config-error.js';
import { loadConfig, loadConfigSection, type Config } from '../config/load-config.js';
import { openState } from '../state/open-state.js';
import type { Store } from '../state/store.js';
import { StoreError } from '../state/store-error.js';
import { visibleText } from '../lib/visible-text.js';
import { EXIT, print, UsageError, type CliIo, type Command } from './command.js';
import { commandConfigFile, resolveConfigFile } from './config-file.js';

/**
 * Runs `body` with the state store of the config `file` open, and closes it. The config's secrets
 * need not be set (but for `state.url`'s), and the state must exist already, at this release's
 * schema: the daemon creates and migrates it. Its failures (bad usage or config, state missing or unusable) are the command's, turned into
 * exit codes by {@link defineCommand}.
 */
export async function withStateStore(
  io: CliIo,
  file: string,
  body: (store: Store) => number | Promise<number>,
): Promise<number> {
  // No API token or channel secret needed (see loadConfigSection).
  const store = openState(loadConfigSection(file, io.env, 'state'), { mustExist: true, keepSchema: true });
  try {
    return await body(store);
  } finally {
    store.close();
  }
}

/**
 * Who a command acts as: `--by`, else $USER or $LOGNAME. With none of them (under `docker exec`
 * or cron, where $USER is unset) it asks for `--by` rather than record an author nobody can trace.
 */
export function actingPerson(given: string | undefined, env: NodeJS.ProcessEnv): string {
  const who = (given ?? env.USER ?? env.LOGNAME ?? '').trim();
  if (who) return who;
  throw new UsageError(
    given === undefined
      ? '$USER is not set here (as under docker exec or cron): say who you are with --by NAME'
      : '--by must name someone',
  );
}

/** The errors that mean the command was asked for something wrong: said with the usage, exit code 2. */
const USAGE_ERRORS = [UsageError, MatcherError, SilenceError, AcknowledgeError];

/** Prints a command failure the way every command does and returns its exit code; throws any other error on. */
export function reportFailure(io: CliIo, commandUsage: string, err: unknown): number {
  if (USAGE_ERRORS.some((type) => err instanceof type))
    return print(io.stderr, `error: ${(err as Error).message}\n\n${commandUsage}\n`, EXIT.usage);
  if (err instanceof ConfigError) return print(io.stderr, `configuration is not valid:\n${err.message}\n`, EXIT.usage);
  if (err instanceof StoreError) return print(io.stderr, `error: ${err.message}\n`, EXIT.incomplete);
  throw err;
}

/** An option's value read by `read`, whose error is said as the option's ({@link UsageError}). */
export function optionValue<T>(flag: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

/** The options a command takes, as node:util parseArgs reads them. */
type ArgOptions = NonNullable<ParseArgsConfig['options']>;

/** A command line parsed by {@link parseCommandArgs}. */
type ParsedArgs<O extends ArgOptions> = ReturnType<typeof parseCommandArgs<O>>;

/** The option every command that reads a config file takes. */
const CONFIG_OPTION = { config: { type: 'string', short: 'c' } } as const;

/**
 * A command whose command line is read before it runs, in one place: `options` and `--config`
 * parsed strictly, then `parse` turns them into what `run` needs, and the configuration file is
 * found (`resolveConfigFile`). A bad option or value (`parse` throws a UsageError), or no file, is
 * printed with the usage ({@link reportFailure}), exit code 2, and `run` never starts; what `run`
 * fails with is reported the same way.
 */
export function defineCommand<const O extends ArgOptions, P>(spec: {
  usage: string;
  /** The options besides `--config FILE` (`-c`), which every command takes but `configFile: false` ones. */
  options: O;
  /** False for a command that reads no configuration file; default true. */
  configFile?: false;
  /** Whether the command takes positional arguments. */
  positionals?: boolean;
  parse: (args: ParsedArgs<O>, io: CliIo) => P;
  /** `file`: the configuration file the command line names ('' for a command that reads none). */
  run: (parsed: P, io: CliIo, file: string) => Promise<number>;
}): Command {
  const options = spec.configFile === false ? spec.options : { ...CONFIG_OPTION, ...spec.options };
  return {
    usage: spec.usage,
    async run(argv, io) {
      try {
        const args = parseCommandArgs(argv, options, spec.positionals);
        const parsed = spec.parse(args as ParsedArgs<O>, io);
        const given = (args.values as { config?: string }).config;
        const file = spec.configFile === false ? '' : resolveConfigFile(given, io);
        return await spec.run(parsed, io, file);
      } catch (err) {
        // Besides the command line: a config the command loads itself that is not valid, usage
        // found wrong on the way, a state missing or unusable. Anything else is thrown on.
        return reportFailure(io, spec.usage, err);
      }
    },
  };
}

/** Parses argv with node:util parseArgs (strict), turning its errors into {@link UsageError}. */
export function parseCommandArgs<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Loads the config file a command line named (`resolveConfigFile` found it), with the `--config`
 * the commands the daemon prints must give (see `commandConfigFile`). Throws a ConfigError for an
 * invalid one, which {@link defineCommand} prints as every command does.
 */
export function loadCommandConfig(file: string, io: CliIo): { config: Config; commandConfigFile: string | undefined } {
  return { config: loadConfig(file, io.env), commandConfigFile: commandConfigFile(file, io) };
}

/** How {@link table} fits a terminal. */
export interface TableFit {
  /** The terminal's width in columns. */
  width: number;
  /**
   * The columns that may be cut (with …) to fit it, by index, the first cut first; each keeps `min`
   * characters, and its header whole. A column may come again with a lower `min`, to be cut further
   * once the others have given way.
   */
  shrink: readonly { column: number; min: number }[];
}

/**
 * Left-aligned columns two spaces apart; the last column is not padded. With `fit`, the columns
 * it names are cut, a cut cell ending in …, until a row fits the width (as far as their minimums
 * allow); without it nothing is cut (a pipe, a file, --json: every character kept).
 */
export function table(rawRows: string[][], fit?: TableFit): string {
  // Cells hold the service's text (app names, summaries): shown, never obeyed by the terminal.
  const rows = rawRows.map((r) => r.map(terminalSafe));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  if (fit) {
    let excess = widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1) - fit.width;
    for (const { column, min } of fit.shrink) {
      if (excess <= 0) break;
      const cut = Math.min(excess, Math.max(0, widths[column]! - Math.max(min, rows[0]![column]!.length)));
      widths[column]! -= cut;
      excess -= cut;
    }
  }
  const cell = (text: string, i: number) => (text.length > widths[i]! ? `${text.slice(0, widths[i]! - 1)}…` : text);
  return rows
    .map((r) => r.map((text, i) => (i === r.length - 1 ? cell(text, i) : cell(text, i).padEnd(widths[i]!))).join('  '))
    .join('\n')
    .concat('\n');
}

/** The width of the terminal `stream` writes to; undefined when it is no terminal (a pipe, a file). */
export function terminalWidth(stream: Writable): number | undefined {
  const tty = stream as Partial<NodeJS.WriteStream>;
  return tty.isTTY === true && typeof tty.columns === 'number' && tty.columns > 0 ? tty.columns : undefined;
}

/**
 * Text from the service as a terminal shows it: every character it would act on rather than show
 * (C0 and C1 controls: escape sequences that recolour, move the cursor or set the title, line
 * breaks that split a row; DEL; the bidi and zero-width characters that reorder or hide text)
 * written as `\u{1b}`.
 */
export function terminalSafe(text: string): string {
  return visibleText(text, { controls: true });
}

/**
 * JSON for a terminal: as `JSON.stringify` writes it, with the characters a terminal would act on
 * that it leaves raw (C1 controls, bidi and zero-width characters) escaped as `\uXXXX`, which JSON
 * reads back as the same text.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    RAW_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Of what {@link terminalSafe} writes out, what `JSON.stringify` leaves raw: it escapes C0 itself (and lays out with newlines). */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
