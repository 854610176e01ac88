/**
 * `deploy-watchdog validate`: checks a configuration file and says what it will do, or lists every
 * problem. A `${VAR}` that is not set is no problem by default: validate runs where the daemon's
 * secrets are not (CI, a laptop), so it names each such variable and checks everything else with a
 * stand-in value; `--require-env` counts them as problems, for the daemon's own environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { JOB_NAMES } from '../collectors/collectors.js';
import { ConfigError, formatProblem, type ConfigProblem } from '../config/config-error.js';
import { configWarnings } from '../config/config-warnings.js';
import { loadConfigWithUnset, type Config, type ConfigWithUnset } from '../config/load-config.js';
import { defineCommand } from './cli-helpers.js';
import { EXIT, print } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog validate [--config FILE] [--require-env]

Checks a configuration file and prints a one-line summary (exit 0), or every problem as
FILE:LINE key.path: message (exit 2). \${VAR} references are resolved from the environment; one
whose variable is not set here is named (FILE:LINE key.path) and its value checked with a stand-in,
so a file can be checked where the daemon's secrets are not (CI). Warnings (no channel, a secret
written in the file, a state file this user could not create) are printed too; they do not fail
the check.

  --config FILE    the configuration file (${CONFIG_FILE_DEFAULTS})
  --require-env    an unset variable is a problem (exit 2): check the daemon's own environment`;

/** One line saying what a valid config will do, with counts an operator can eyeball. */
export function summarize(file: string, config: Config, unset: readonly ConfigProblem[] = []): string {
  const channels = config.notify.channels.map((c) => `${c.name}:${c.type}`);
  const schedules = Object.entries(config.jobs).filter(([k]) => (JOB_NAMES as string[]).includes(k));
  const jobs = schedules.filter(([, v]) => v !== null).map(([k]) => k);
  const off = schedules.filter(([, v]) => v === null).map(([k]) => k);
  const policies = config.remediation.policies.length;
  const remediation = !config.remediation.enabled ? 'off' : config.remediation.dry_run ? 'dry run' : 'on';
  const variables = [...new Set(unset.map((p) => p.unsetVariable))];
  return [
    variables.length === 0
      ? `${file}: OK`
      : `${file}: OK but for ${variables.length} variable${variables.length === 1 ? '' : 's'} not set here (${variables.join(', ')})`,
    `${channels.length} channel${channels.length === 1 ? '' : 's'}${channels.length ? ` (${channels.join(', ')})` : ''}`,
    `${config.notify.routes.length} route${config.notify.routes.length === 1 ? '' : 's'}`,
    `${jobs.length} job${jobs.length === 1 ? '' : 's'} (${jobs.join(', ')}${off.length ? `; off: ${off.join(', ')}` : ''})`,
    `remediation ${remediation} with ${policies} polic${policies === 1 ? 'y' : 'ies'}`,
  ].join(', ');
}

/** `deploy-watchdog validate [--config FILE] [--require-env]`. */
const validate = defineCommand({
  usage,
  options: { 'require-env': { type: 'boolean' } },
  parse: ({ values }) => values['require-env'] === true,
  async run(requireEnv, io, file) {
    let loaded: ConfigWithUnset;
    try {
      loaded = loadConfigWithUnset(file, io.env, !requireEnv);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const n = err.problems.length;
      return print(io.stderr, `${err.message}\n${file}: ${n} problem${n === 1 ? '' : 's'}\n`, EXIT.usage);
    }
    const { config, unset, inlineSecrets } = loaded;
    io.stdout.write(`${summarize(file, config, unset)}\n`);
    for (const p of unset) {
      // A `${file:PATH}` the daemon reads where it runs, as it does a variable's value.
      const why = p.unsetVariable?.startsWith('file:') ? `${p.message} here` : `\${${p.unsetVariable}} is not set here`;
      io.stderr.write(
        `${formatProblem(file, { ...p, message: `${why}; checked with a stand-in (the daemon needs it set)` })}\n`,
      );
    }
    const stateWarning =
      config.state.path === undefined || unset.some((p) => p.path === 'state.path')
        ? undefined
        : stateFileWarning(config.state.path);
    const warnings = [
      ...configWarnings(config),
      ...inlineSecrets,
      ...(stateWarning ? [{ path: 'state.path', message: stateWarning }] : []),
    ];
    for (const w of warnings) io.stderr.write(`${formatProblem(file, { ...w, message: `warning: ${w.message}` })}\n`);
    return EXIT.ok;
  },
});

/**
 * Why the daemon, run as this user on this machine, could not open or create the state file, if
 * it could not: the directory missing or not writable, or the file not writable. A warning, not a
 * problem: validate may run elsewhere than the daemon (CI), or as another user.
 */
function stateFileWarning(file: string): string | undefined {
  const uid = process.getuid?.();
  const who = uid === undefined ? 'this user' : `this user (uid ${uid})`;
  if (fs.existsSync(file)) {
    return writable(file) ? undefined : `${file} is not writable by ${who}; the daemon needs to write it`;
  }
  const dir = path.dirname(file);
  if (!fs.existsSync(dir)) {
    return `${dir} does not exist here, so the daemon cannot create ${path.basename(file)} in it (create the directory, or set another state.path)`;
  }
  return writable(dir)
    ? undefined
    : `${dir} is not writable by ${who}, so the daemon run as this user cannot create ${path.basename(file)} in it`;
}

function writable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export default validate;
