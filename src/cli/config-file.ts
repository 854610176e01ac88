/**
 * Where every command that reads a configuration finds it: `--config FILE`, else the file
 * `$DEPLOY_WATCHDOG_CONFIG` names, else {@link DEFAULT_CONFIG_FILE} when it exists. And the other
 * way round: what a command printed by the daemon must say (`--config` or nothing) to read the
 * daemon's own file when a person runs it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, type CliIo } from './command.js';

/** The configuration file read when neither `--config` nor the environment names one. */
export const DEFAULT_CONFIG_FILE = '/etc/deploy-watchdog/config.yaml';

/** The environment variable that names the configuration file when `--config` is not given. */
export const CONFIG_FILE_ENV = 'DEPLOY_WATCHDOG_CONFIG';

/** How usages describe `--config`: where the file comes from when the option is left out. */
export const CONFIG_FILE_DEFAULTS = `default: $${CONFIG_FILE_ENV}, else ${DEFAULT_CONFIG_FILE}`;

/** What of the process decides where the configuration is. */
export type ConfigPlaces = Pick<CliIo, 'env' | 'defaultConfigFile'>;

/**
 * The configuration file a command reads: `given` (its `--config`), else `$DEPLOY_WATCHDOG_CONFIG`
 * (empty counts as unset), else the default file when it exists. A file named by the option is
 * read (and its absence reported) by the loader; one named by the environment must exist, since a
 * silent fall back to the default file would run on another configuration. Throws a UsageError
 * naming all three places when none gives a file.
 */
export function resolveConfigFile(
  given: string | undefined,
  { env, defaultConfigFile: defaultFile = DEFAULT_CONFIG_FILE }: ConfigPlaces,
): string {
  if (given !== undefined) {
    if (given === '') throw new UsageError('--config needs a file name');
    return given;
  }
  const named = env[CONFIG_FILE_ENV];
  if (named) {
    if (!fs.existsSync(named))
      throw new UsageError(`$${CONFIG_FILE_ENV} names ${JSON.stringify(named)}, which does not exist`);
    return named;
  }
  if (fs.existsSync(defaultFile)) return defaultFile;
  throw new UsageError(`no configuration file: give --config FILE, set $${CONFIG_FILE_ENV}, or create ${defaultFile}`);
}

/**
 * The `--config` a command the daemon prints (a "To silence" line) must give to read the daemon's
 * file `file`: its absolute path, or undefined when it needs none. It needs none only when `file`
 * is the default file and the daemon's environment does not set `$DEPLOY_WATCHDOG_CONFIG`: the
 * default file is the one place every shell on the host resolves the same way, while the variable
 * may be set for the daemon only (a systemd `Environment=`), leaving a person's shell to read
 * another file or none.
 */
export function commandConfigFile(
  file: string,
  { env, defaultConfigFile: defaultFile = DEFAULT_CONFIG_FILE }: ConfigPlaces,
): string | undefined {
  const absolute = path.resolve(file);
  return !env[CONFIG_FILE_ENV] && absolute === path.resolve(defaultFile) ? undefined : absolute;
}
