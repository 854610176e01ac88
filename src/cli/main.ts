/**
 * Entry point of `npx deploy-watchdog <command>`. Each command lives in its own file of this
 * folder; this file only finds it and hands it the process's streams and a stop signal.
 */
import { EXIT, print, type Command, type CliIo } from './command.js';
import { packageVersion } from '../lib/package-version.js';
import { simulatorPackageCommand } from './simulator-package.js';

/** Every command, in the order `--help` lists them. */
const COMMAND_NAMES = [
  ...['run', 'check', 'alerts', 'actions', 'simulator', 'silence', 'silences', 'unsilence', 'ack', 'unack'],
  ...['validate', 'schema', 'healthcheck', 'notify-test', 'migrate-state', 'demo'],
];

/**
 * A command loaded on demand from its own file (`<name>.ts`), so `validate` does not pay for
 * the simulator; `ack` and `unack` from the one file of both (`acknowledge-command.ts`);
 * `simulator` and `demo` from the simulator's own package (`simulator-package.ts`).
 */
function loadCommand(name: string): Promise<{ default: Command }> {
  if (name === 'simulator' || name === 'demo') return simulatorPackageCommand(name);
  if (name !== 'ack' && name !== 'unack') return import(`./${name}.js`);
  return import('./acknowledge-command.js').then((m) => ({ default: m.acknowledgeCommand(name) }));
}

function help(): string {
  return [
    'usage: deploy-watchdog <command> [options]',
    '',
    `commands: ${COMMAND_NAMES.join(', ')}`,
    'Run `deploy-watchdog <command> --help` for the options of one command,',
    '`deploy-watchdog --version` for the version.',
    '',
  ].join('\n');
}

/** Runs one command line; resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    return print(io.stdout, help(), name ? EXIT.ok : EXIT.usage);
  }
  if (name === '--version' || name === '-V') return print(io.stdout, `deploy-watchdog ${packageVersion()}\n`);
  if (!COMMAND_NAMES.includes(name)) return print(io.stderr, `unknown command: ${name}\n${help()}`, EXIT.usage);
  const command = (await loadCommand(name)).default;
  if (rest.includes('--help') || rest.includes('-h')) return print(io.stdout, `${command.usage}\n`);
  return command.run(rest, io);
}
