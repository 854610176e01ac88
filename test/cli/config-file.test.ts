/** Where commands find their configuration, and what the daemon's printed commands must say to find it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/command.js';
import {
  commandConfigFile,
  CONFIG_FILE_ENV,
  DEFAULT_CONFIG_FILE,
  resolveConfigFile,
} from '../../src/cli/config-file.js';
import { Store } from '../../src/state/store.js';
import { NO_DEFAULT_CONFIG, runCli, writeConfig } from '../helpers/cli-harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-config-file-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const CONFIG =
  'api: { base_url: "http://127.0.0.1:9", token: "${T:-t}" }\nstate: { path: ./state.db }\nnotify: { channels: [{ name: c, type: log }] }\n';
const given = writeConfig(dir, CONFIG, 'given.yaml');
const fromEnv = writeConfig(dir, CONFIG, 'from-env.yaml');
const byDefault = writeConfig(dir, CONFIG, 'default.yaml');
// The state file the daemon would have made: state commands open it, never create it.
Store.open(path.join(dir, 'state.db')).close();
const missing = path.join(dir, 'missing.yaml');

describe('resolveConfigFile', () => {
  it.each<[string, string | undefined, NodeJS.ProcessEnv, string, string]>([
    ['--config over everything', given, { [CONFIG_FILE_ENV]: fromEnv }, byDefault, given],
    [
      '--config even when it does not exist (the loader says so)',
      missing,
      { [CONFIG_FILE_ENV]: fromEnv },
      byDefault,
      missing,
    ],
    ['$DEPLOY_WATCHDOG_CONFIG over the default', undefined, { [CONFIG_FILE_ENV]: fromEnv }, byDefault, fromEnv],
    ['the default file when nothing names one', undefined, {}, byDefault, byDefault],
    [
      'the default file when $DEPLOY_WATCHDOG_CONFIG is empty',
      undefined,
      { [CONFIG_FILE_ENV]: '' },
      byDefault,
      byDefault,
    ],
  ])('%s', (_name, option, env, defaultConfigFile, file) => {
    expect(resolveConfigFile(option, { env, defaultConfigFile })).toBe(file);
  });

  it.each<[string, string | undefined, NodeJS.ProcessEnv, string, string]>([
    [
      'none of the three',
      undefined,
      {},
      missing,
      `no configuration file: give --config FILE, set $${CONFIG_FILE_ENV}, or create ${missing}`,
    ],
    ['an empty --config', '', { [CONFIG_FILE_ENV]: fromEnv }, byDefault, '--config needs a file name'],
    // Never a silent fall back to the default file: that would run on another configuration.
    [
      'a $DEPLOY_WATCHDOG_CONFIG that names nothing',
      undefined,
      { [CONFIG_FILE_ENV]: missing },
      byDefault,
      `$${CONFIG_FILE_ENV} names ${JSON.stringify(missing)}, which does not exist`,
    ],
  ])('refuses %s with a usage error saying where it looked', (_name, option, env, defaultConfigFile, message) => {
    expect(() => resolveConfigFile(option, { env, defaultConfigFile })).toThrow(new UsageError(message));
  });

  // Only where the host has no configuration of its own there: a test never reads a host's file.
  it.skipIf(fs.existsSync(DEFAULT_CONFIG_FILE))(
    'looks in /etc/deploy-watchdog/config.yaml when not told otherwise',
    () => {
      expect(() => resolveConfigFile(undefined, { env: {} })).toThrow(
        /, or create \/etc\/deploy-watchdog\/config\.yaml$/,
      );
    },
  );
});

describe('commandConfigFile', () => {
  const relative = path.relative(process.cwd(), byDefault);

  it.each<[string, string, NodeJS.ProcessEnv, string | undefined]>([
    ['the default file, no variable: none needed', byDefault, {}, undefined],
    ['the default file named relatively: none needed', relative, {}, undefined],
    ['another file: its absolute path', given, {}, given],
    ['another file named relatively: its absolute path', path.relative(process.cwd(), given), {}, given],
    // The variable may be set for the daemon only (a systemd unit): a person's shell would not see it.
    ['the file $DEPLOY_WATCHDOG_CONFIG names: its absolute path', fromEnv, { [CONFIG_FILE_ENV]: fromEnv }, fromEnv],
    [
      'the default file while $DEPLOY_WATCHDOG_CONFIG is set: its absolute path',
      byDefault,
      { [CONFIG_FILE_ENV]: fromEnv },
      byDefault,
    ],
  ])('%s', (_name, file, env, expected) => {
    expect(commandConfigFile(file, { env, defaultConfigFile: byDefault })).toBe(expected);
  });
});

describe('every command that reads a config finds it the same three ways', () => {
  /** `validate` prints the file it read; `silences` opens the state file the config names. */
  it.each<[string, string[], NodeJS.ProcessEnv, string, string]>([
    ['--config', ['--config', given], { [CONFIG_FILE_ENV]: fromEnv }, byDefault, given],
    ['$DEPLOY_WATCHDOG_CONFIG', [], { [CONFIG_FILE_ENV]: fromEnv }, byDefault, fromEnv],
    ['the default file', [], {}, byDefault, byDefault],
  ])('from %s', async (_name, argv, env, defaultConfigFile, file) => {
    const validated = await runCli(['validate', ...argv], { env, defaultConfigFile });
    expect(validated).toMatchObject({ code: 0, stderr: '' });
    expect(validated.stdout).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: OK, `));
    const listed = await runCli(['silences', ...argv], { env, defaultConfigFile });
    expect(listed).toMatchObject({ code: 0, stdout: 'no silences in force\n' });
  });

  it.each<[string, string[]]>([
    ['validate', []],
    ['check', []],
    ['run', []],
    ['alerts', []],
    ['silence', ['--match', 'app=shop', '--for', '1h', '--reason', 'x']],
    ['silences', []],
    ['unsilence', ['0123456789ab']],
    ['actions', []],
    ['notify-test', []],
    ['healthcheck', []],
  ])(
    '%s names all three places when none gives a file, and its usage shows the option as optional',
    async (command, args) => {
      const result = await runCli([command, ...args], { defaultConfigFile: NO_DEFAULT_CONFIG });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `no configuration file: give --config FILE, set $${CONFIG_FILE_ENV}, or create ${NO_DEFAULT_CONFIG}`,
      );
      expect(result.stderr).toContain(`usage: deploy-watchdog ${command} [--config FILE]`);
      expect(result.stderr).toContain(`default: $${CONFIG_FILE_ENV}, else ${DEFAULT_CONFIG_FILE}`);
    },
  );
});
