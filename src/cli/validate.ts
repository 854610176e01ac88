import { JOB_NAMES } from '../collectors/collectors.js';
import { ConfigError } from '../config/config-error.js';
import { loadConfig, type Config } from '../config/load-config.js';
import { parseCommandArgs, reportUsageError } from './cli-helpers.js';
import { EXIT, type Command } from './command.js';
import { CONFIG_FILE_DEFAULTS, resolveConfigFile } from './config-file.js';

const usage = `usage: deploy-watchdog validate [--config FILE]

Checks a configuration file and prints a one-line summary (exit 0), or every problem as
FILE:LINE key.path: message (exit 2). \${VAR} references are resolved from the environment.

  --config FILE   the configuration file (${CONFIG_FILE_DEFAULTS})`;

/** One line saying what a valid config will do, with counts an operator can eyeball. */
export function summarize(file: string, config: Config): string {
  const channels = config.notify.channels.map((c) => `${c.name}:${c.type}`);
  const schedules = Object.entries(config.jobs).filter(([k]) => (JOB_NAMES as string[]).includes(k));
  const jobs = schedules.filter(([, v]) => v !== null).map(([k]) => k);
  const off = schedules.filter(([, v]) => v === null).map(([k]) => k);
  const policies = config.remediation.policies.length;
  const remediation = !config.remediation.enabled ? 'off' : config.remediation.dry_run ? 'dry run' : 'on';
  return [
    `${file}: OK`,
    `${channels.length} channel${channels.length === 1 ? '' : 's'}${channels.length ? ` (${channels.join(', ')})` : ''}`,
    `${config.notify.routes.length} route${config.notify.routes.length === 1 ? '' : 's'}`,
    `${jobs.length} job${jobs.length === 1 ? '' : 's'} (${jobs.join(', ')}${off.length ? `; off: ${off.join(', ')}` : ''})`,
    `remediation ${remediation} with ${policies} polic${policies === 1 ? 'y' : 'ies'}`,
  ].join(', ');
}

/** `deploy-watchdog validate [--config FILE]`. */
const validate: Command = {
  name: 'validate',
  summary: 'check a configuration file and list every problem',
  usage,
  async run(argv, io) {
    let file: string;
    try {
      const { values } = parseCommandArgs(argv, { config: { type: 'string', short: 'c' } });
      file = resolveConfigFile(values.config, io);
    } catch (err) {
      return reportUsageError(io, usage, err);
    }
    try {
      const config = loadConfig(file, io.env);
      io.stdout.write(`${summarize(file, config)}\n`);
      return EXIT.ok;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const n = err.problems.length;
      io.stderr.write(`${err.message}\n${file}: ${n} problem${n === 1 ? '' : 's'}\n`);
      return EXIT.usage;
    }
  },
};

export default validate;
