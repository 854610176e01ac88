/**
 * The commands that work on the state file alone (alerts, silence, silences, unsilence, actions)
 * run without the daemon's secrets, as an operator's shell has them, and refuse a state file that
 * does not exist instead of creating an empty one and reporting "no open alerts".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/state/store.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { finding, fireFindings } from '../alerts/fixtures.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-state-cmds-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A config whose secrets all come from variables the shell does not set. */
function config(statePath = './state.db', extra: string[] = []): string {
  return writeConfig(dir, [
    'api:',
    '  base_url: https://manage.example.com',
    '  token: ${DMS_API_TOKEN}',
    `state: { path: "${statePath}" }`,
    'notify:',
    '  channels:',
    '    - { name: ops, type: slack, webhook_url: "${SLACK_WEBHOOK_URL}" }',
    ...extra,
  ]);
}

describe('state commands', () => {
  it.each([
    ['alerts', [], 'no open alerts\n'],
    ['silences', [], 'no silences in force\n'],
    ['actions', [], 'no remediation decisions recorded\n'],
  ])('%s runs with the API token and the webhook unset', async (command, args, said) => {
    const file = config();
    Store.open(path.join(dir, 'state.db')).close();
    const result = await runCli([command, '--config', file, ...args], { env: {} });
    expect(result).toMatchObject({ code: 0, stdout: said, stderr: '' });
  });

  it('alerts names the alert that holds another back (a bad server its apps), in the table and --json', async () => {
    const file = config();
    const db = path.join(dir, 'state.db');
    Store.open(db).close();
    const server = { check: 'servers', server: 'srv-7' };
    fireFindings(db, 'servers', [
      finding('server/7', { check: 'servers', severity: 'critical', summary: 'Server srv-7 is down', labels: server }),
    ]);
    fireFindings(db, 'runs', [finding('run/1', { labels: { check: 'failed_runs', app: 'shop', server: 'srv-7' } })]);
    const json = JSON.parse((await runCli(['alerts', '--config', file, '--json'], { env: {} })).stdout) as {
      id: string;
      fingerprint: string;
      inhibitedBy: unknown;
    }[];
    const [serverId, runId] = json.map((a) => a.id);
    expect(json.map((a) => [a.fingerprint, a.inhibitedBy])).toEqual([
      ['server/7', null],
      ['run/1', { id: serverId, rule: 'bad_servers' }],
    ]);
    const listed = await runCli(['alerts', '--config', file], { env: {} });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`\n${runId} held back by ${serverId} (bad_servers): Server srv-7 is down\n`);
    expect(listed.stdout).toMatch(/^2 open \(2 firing, 0 pending\); 1 held back by an inhibition$/m);
  });

  it('silence and unsilence run with the secrets unset', async () => {
    const file = config();
    Store.open(path.join(dir, 'state.db')).close();
    const made = await runCli(
      ['silence', '--config', file, '--match', 'app=shop', '--for', '1h', '--reason', 'deploy'],
      { env: { USER: 'ops-bob' } },
    );
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout
      .trim()
      .split(/\s+/)
      .find((w) => /^[0-9a-f]{12}$/.test(w))!;
    expect((await runCli(['unsilence', '--config', file, id], { env: { USER: 'ops-bob' } })).code).toBe(0);
  });

  it.each(['alerts', 'silences', 'actions'])(
    '%s refuses a state file that does not exist, and creates none',
    async (command) => {
      const file = config('./stat.db');
      const result = await runCli([command, '--config', file], { env: {} });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error: state database ${path.join(dir, 'stat.db')}: does not exist; is state.path right? (the daemon creates the file when it first starts)\n`,
      );
      expect(fs.existsSync(path.join(dir, 'stat.db'))).toBe(false);
    },
  );

  it('still needs the variables the state section uses, and still reports every other problem', async () => {
    const unset = await runCli(['alerts', '--config', config('${STATE_DIR}/state.db')], { env: {} });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/state\.path: environment variable STATE_DIR is not set/);
    expect(unset.stderr).not.toMatch(/DMS_API_TOKEN|SLACK_WEBHOOK_URL/);

    const broken = await runCli(['alerts', '--config', config('./state.db', ['alerts: { repeat_interval: soon }'])], {
      env: {},
    });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/alerts\.repeat_interval/);
  });
});
