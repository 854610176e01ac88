import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/config-json-schema.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';

const SECRET = 'tok-never-printed-42';

/** Runs a command line in-process, capturing what it writes. */
const run = (argv: string[], env: NodeJS.ProcessEnv = {}) => runCli(argv, { env });

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-cli-config-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, text: string): string => writeConfig(dir, text, name);

describe('deploy-watchdog validate', () => {
  it('exits 0 with a one-line summary for a valid file', async () => {
    const file = write(
      'ok.yaml',
      `api: { base_url: "https://manage.example.com", token: "\${TOKEN}" }
jobs: { maintenance: "off" }
notify:
  channels: [{ name: console, type: log }]
  routes: [{ channels: [console] }]
`,
    );
    const { code, stdout, stderr } = await run(['validate', '--config', file], { TOKEN: SECRET });
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe(
      `${file}: OK, 1 channel (console:log), 1 route, 6 jobs (runs, attention, urls, backups, servers, installers; off: maintenance), remediation off with 0 policies\n`,
    );
  });

  it('exits 2 listing every problem as FILE:LINE path: message, without secrets', async () => {
    const file = write(
      'bad.yaml',
      `api:
  base_url: https://manage.example.com
  token: "\${TOKEN}"
  timeout: soon
notify:
  routes: [{ channels: [nowhere] }]
`,
    );
    const { code, stdout, stderr } = await run(['validate', '--config', file], { TOKEN: SECRET });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([
      `${file}:4 api.timeout: must be a duration such as 500ms, 30s, 15m, 26h, 8d, 2w or 1h30m`,
      `${file}:6 notify.routes[0].channels[0]: unknown channel "nowhere" (no channels are defined)`,
      `${file}: 2 problems`,
      '',
    ]);
    expect(stderr).not.toContain(SECRET);
  });

  it.each([
    [['validate'], /no configuration file: give --config FILE, set \$DEPLOY_WATCHDOG_CONFIG, or create \/dev\/null\//],
    [['validate', '--conf', 'x.yaml'], /Unknown option '--conf'/],
  ])('exits 2 on a usage error: %j', async (argv, message) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).toContain('usage: deploy-watchdog validate [--config FILE]');
  });

  it('warns of a secret written in the file, at its line, without showing it', async () => {
    const file = write(
      'inline.yaml',
      `api:
  base_url: https://manage.example.com
  token: ${SECRET}
notify:
  channels: [{ name: s, type: slack, webhook_url: "\${HOOK}" }]
`,
    );
    for (const flags of [[], ['--require-env']]) {
      const { code, stderr } = await run(['validate', '--config', file, ...flags], { HOOK: 'https://hooks.example/x' });
      expect(code).toBe(0);
      expect(stderr).toBe(
        `${file}:3 api.token: warning: is a secret written in the file itself, so whoever reads the file (its copies, its Git history) has it: write \${VAR} here and set VAR in the environment of the daemon\n`,
      );
    }
  });

  it('exits 2 when the file cannot be read', async () => {
    const file = path.join(dir, 'absent.yaml');
    const { code, stderr } = await run(['validate', '--config', file]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${file}: cannot read the configuration file: file not found`);
  });
});

describe('deploy-watchdog schema', () => {
  it('prints the JSON Schema', async () => {
    const { code, stdout } = await run(['schema']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(configJsonSchema());
  });

  it('writes it with --out', async () => {
    const out = path.join(dir, 'config.schema.json');
    const { code, stderr } = await run(['schema', '--out', out]);
    expect(code).toBe(0);
    expect(stderr).toBe(`wrote ${out}\n`);
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual(configJsonSchema());
    expect(fs.readdirSync(dir)).toEqual(['config.schema.json']);
  });

  it('exits 1 when --out cannot be written', async () => {
    const out = path.join(dir, 'missing-dir', 'config.schema.json');
    const { code, stderr } = await run(['schema', '--out', out]);
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot write ${out}`);
  });
});
