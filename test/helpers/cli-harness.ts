/**
 * Runs `deploy-watchdog` command lines in-process through `main`, capturing what they print, and
 * writes the config files they read: the set-up every command test needs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';

/** What one command line answered and printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for {@link runCli}. */
export interface RunCliOptions {
  /** The command's whole environment (`${VAR}` in the config reads from it); empty by default. */
  env?: NodeJS.ProcessEnv;
  /** Aborting it is Ctrl-C; never aborted by default. */
  signal?: AbortSignal;
  /** Sees everything printed to stdout so far, each time it grows (to act while the command runs). */
  onOutput?: (stdout: string) => void;
  /** The configuration read when neither --config nor $DEPLOY_WATCHDOG_CONFIG names one; none by default. */
  defaultConfigFile?: string;
  /** Standard output is a terminal this many columns wide; by default it is no terminal (a pipe). */
  columns?: number;
}

/**
 * The default configuration file of every command run here unless a test gives one: a path below
 * /dev/null (a file, not a folder), so it can never exist and a host's own
 * /etc/deploy-watchdog/config.yaml is never read by a test.
 */
export const NO_DEFAULT_CONFIG = '/dev/null/deploy-watchdog/config.yaml';

/** A stream that hands each chunk written to it, as text, to `append`. */
function sink(append: (text: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      append(chunk.toString());
      done();
    },
  });
}

/** Runs one command line (`argv` without the program name) through `main`, capturing both streams. */
export async function runCli(argv: string[], options: RunCliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const out = sink((s) => {
    stdout += s;
    options.onOutput?.(stdout);
  });
  // What a terminal stream has that a pipe has not (see `terminalWidth`).
  if (options.columns !== undefined) Object.assign(out, { isTTY: true, columns: options.columns });
  const code = await main(argv, {
    stdout: out,
    stderr: sink((s) => (stderr += s)),
    env: options.env ?? {},
    signal: options.signal ?? new AbortController().signal,
    defaultConfigFile: options.defaultConfigFile ?? NO_DEFAULT_CONFIG,
  });
  return { code, stdout, stderr };
}

/** Writes a config file into `dir` (lines are joined with newlines) and answers its path. */
export function writeConfig(dir: string, yaml: string | readonly string[], name = 'config.yaml'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof yaml === 'string' ? yaml : yaml.join('\n'));
  return file;
}

/** The JSON log lines of a command's output (`log: { format: json }`), each parsed; other lines left out. */
export function jsonLogLines(output: string): { level: number; msg: string; key?: string }[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; key?: string });
}

/**
 * Writes the config the state commands (alerts, silence, silences, unsilence, actions) need into
 * `dir`: an API nobody answers and a token from a variable they leave unset, the state file
 * `dir/state.db`. Answers its path.
 */
export function writeStateCommandConfig(dir: string): string {
  return writeConfig(dir, [
    'api: { base_url: "http://127.0.0.1:9", token: "${DMS_API_TOKEN}" }',
    'state: { path: ./state.db }',
  ]);
}
