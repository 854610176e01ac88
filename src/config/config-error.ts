/** One thing wrong with a configuration file. */
export interface ConfigProblem {
  /** Where, as a key path: `notify.routes[1].channels[0]`; empty for the file as a whole. */
  path: string;
  /** 1-based line in the file, where one could be found. */
  line?: number;
  message: string;
  /** The environment variable whose absence is the problem, when that is all it is. */
  unsetVariable?: string;
}

/**
 * A configuration that cannot be used. `problems` lists every problem found (not just the first);
 * the message prints one per line as `FILE:LINE key.path: message`. No message ever contains a
 * secret's value.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';

  constructor(
    /** The file name (or `<stdin>`, `<inline>`) the problems are about. */
    readonly source: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(problems.map((p) => formatProblem(source, p)).join('\n'));
  }
}

/** A problem of the file `source` as a whole (no key path), at `line` when one is known. */
export function fileError(source: string, message: string, line?: number): ConfigError {
  return new ConfigError(source, [{ path: '', line, message }]);
}

/** `FILE:LINE key.path: message`, leaving out the parts that are unknown. */
export function formatProblem(source: string, problem: ConfigProblem): string {
  const where = problem.line === undefined ? source : `${source}:${problem.line}`;
  return problem.path ? `${where} ${problem.path}: ${problem.message}` : `${where}: ${problem.message}`;
}

/** Why a file the config names cannot be read, as its problem says it: `does not exist`, `cannot be read (EACCES)`. */
export function unreadableText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})`;
}
