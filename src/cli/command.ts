import type { Writable } from 'node:stream';
import type { Hangups } from './hangups.js';

/** What a command can touch of the process: injected so tests run commands in-process. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop cleanly when it fires. */
  signal: AbortSignal;
  /**
   * The process's SIGHUPs since it started (`run` reloads on them). Absent: a command that wants
   * them listens itself.
   */
  hangups?: Hangups;
  /**
   * The configuration file read when neither `--config` nor `$DEPLOY_WATCHDOG_CONFIG` names one.
   * Absent: `DEFAULT_CONFIG_FILE` (`config-file.ts`). Whoever runs commands in-process (the test
   * harness) points it into its own directory, so that a host's configuration is never read.
   */
  defaultConfigFile?: string;
  /**
   * The process must end within `ms`: ends it then if it has not ended by itself, after telling
   * `say` (`exit-deadline.ts`; the real process only: absent where commands run in-process).
   */
  exitBy?: (ms: number, say: (ms: number) => void) => void;
}

/** One command of `deploy-watchdog <command>`. */
export interface Command {
  /** Usage text printed for `--help` and on a usage error. */
  usage: string;
  /** Runs the command; resolves to the exit code (0 done, 1 work not completed, 2 bad config or usage). */
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, incomplete: 1, usage: 2 } as const;

/** A usage error: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Writes `text` to `stream` and answers `code`: what a command says last, and its exit code. */
export function print(stream: Writable, text: string, code: number = EXIT.ok): number {
  stream.write(text);
  return code;
}
