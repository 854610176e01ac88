/**
 * Entry point of `npx deploy-watchdog <command>`. Each command lives in its own file of this
 * folder; this file only finds it and hands it the process's streams and a stop signal.
 */
import type { Command, CliIo } from './command.js';
import { EXIT } from './command.js';
import { packageVersion } from '../lib/package-version.js';
import { simulatorPackageCommand } from './simulator-package.js';

/** Every command, in the order `--help` lists them. */
const COMMAND_NAMES = [
  ...['run', 'check', 'alerts', 'actions', 'simulator', 'silence', 'silences', 'unsilence', 'ack', 'unack'],
  ...['validate', 'schema', 'healthcheck', 'notify-test', 'migrate-state', 'demo'],
];

/**
 * Each command loaded on demand from its own file (`<name>.ts`), so `validate` does not pay for
 * the simulator; `simulator` and `demo` from the simulator's own package (`simulator-package.ts`).
 */
const COMMANDS: Record<string, () => Promise<{ default: Command }>> = Object.fromEntries(
  COMMAND_NAMES.map((name) => [
    name,
    name === 'simulator' || name === 'demo' ? () => simulatorPackageCommand(name) : () => import(`./${name}.js`),
  ]),
);

function help(): string {
  return [
    'usage: deploy-watchdog <command> [options]',
    '',
    `commands: ${Object.keys(COMMANDS).join(', ')}`,
    'Run `deploy-watchdog <command> --help` for the options of one command,',
    '`deploy-watchdog --version` for the version.',
    '',
  ].join('\n');
}

/** Runs one command line; resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(help());
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`deploy-watchdog ${packageVersion()}\n`);
    return EXIT.ok;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.stderr.write(`unknown command: ${name}\n${help()}`);
    return EXIT.usage;
  }
  const command = (await load()).default;
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${command.usage}\n`);
    return EXIT.ok;
  }
  return command.run(rest, io);
}
