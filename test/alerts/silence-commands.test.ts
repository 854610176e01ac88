/** `silence`, `silences` and `unsilence`, run in-process through `main` against a real state file. */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getSilence } from '../../src/alerts/silences.js';
import { Store } from '../../src/state/store.js';
import { runCli, writeConfig, type CliResult } from '../helpers/cli-harness.js';
import { finding, fireFindings, tempState, type TempState } from './fixtures.js';

const TOKEN = 'tok-silence-commands-0123456789';
let state: TempState;
let configFile: string;

beforeEach(() => {
  state = tempState();
  configFile = writeConfig(
    state.dir,
    ['api:', '  base_url: http://127.0.0.1:9', '  token: ${DMS_API_TOKEN}', 'state:', '  path: ./state.db', ''],
    'watchdog.yaml',
  );
  // The daemon creates the state file; these commands only open one that exists.
  Store.open(path.join(state.dir, 'state.db')).close();
});
afterEach(() => state.cleanup());

/** Runs one command line, capturing both streams; the token is never printed. */
async function run(...argv: string[]): Promise<CliResult> {
  const result = await runCli(argv, { env: { DMS_API_TOKEN: TOKEN, USER: 'ops-alice' } });
  expect(result.stdout + result.stderr).not.toContain(TOKEN);
  return result;
}

/** `silence --match app=shop` from `start` to `end`. */
function silenceShop(start: string, end: string, reason: string): Promise<CliResult> {
  return run(
    'silence',
    '--config',
    configFile,
    '--match',
    'app=shop',
    '--start',
    start,
    '--end',
    end,
    '--reason',
    reason,
  );
}

/** Puts firing alerts in the state file, as a daemon cycle would. */
function fireAlerts(): void {
  fireFindings(path.join(state.dir, 'state.db'), 'urls', [
    finding('cert/shop', { check: 'certificates', labels: { check: 'certificates', app: 'shop' } }),
    finding('cert/crm', { check: 'certificates', labels: { check: 'certificates', app: 'crm' } }),
    finding('url/shop', { check: 'url_checks', labels: { check: 'url_checks', app: 'shop' } }),
  ]);
}

describe('silence', () => {
  it('creates a silence, prints its id, and lists it with the open alerts it covers', async () => {
    fireAlerts();
    const made = await run(
      'silence',
      '--config',
      configFile,
      '--match',
      'app=shop',
      '--match',
      'check=~cert.*',
      '--for',
      '2h',
      '--reason',
      'rotating the certificate',
    );
    expect(made.code).toBe(0);
    const id = made.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(made.stderr).toMatch(/silenced app=shop, check=~cert\.\* for 2h, until \d{4}-/);

    const listed = await run('silences', '--config', configFile);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATE\s+MATCHERS\s+FROM\s+UNTIL\s+ALERTS\s+AUTHOR\s+REASON$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${id}\\s+active\\s+app=shop, check=~cert\\.\\*\\s+\\S+Z\\s+\\S+Z\\s+1\\s+ops-alice\\s+rotating the certificate$`,
      ),
    );

    const json = await run('silences', '--config', configFile, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject([
      {
        id,
        state: 'active',
        matchers: ['app=shop', 'check=~cert.*'],
        reason: 'rotating the certificate',
        createdBy: 'ops-alice',
        openAlerts: 1,
        expiredAt: null,
      },
    ]);
  });

  it('schedules a maintenance window with --start and --end, listed as scheduled', async () => {
    fireAlerts();
    const start = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const end = new Date(Date.parse(start) + 2 * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const made = await silenceShop(start, end, 'database upgrade');
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    // How long until it starts is read as an age is: "59m 59s", never down to the millisecond.
    expect(made.stderr).toMatch(new RegExp(`scheduled: silences app=shop from ${start} \\(in 59m 5\\ds\\) for`));
    expect(made.stderr).toContain(`for 2h, until ${end}; it mutes nothing before then`);
    const listed = await run('silences', '--config', configFile);
    expect(listed.stdout).toMatch(
      new RegExp(`^${id}\\s+scheduled\\s+app=shop\\s+${start}\\s+${end}\\s+2\\s+ops-alice\\s+database upgrade$`, 'm'),
    );
    const json = JSON.parse((await run('silences', '--config', configFile, '--json')).stdout) as unknown[];
    expect(json).toMatchObject([{ id, state: 'scheduled', startsAt: start, endsAt: end }]);
  });

  it('asks for --by when $USER is unset (docker exec, cron), and records nobody as unknown', async () => {
    const args = ['silence', '--config', configFile, '--match', 'app=shop', '--for', '1h', '--reason', 'x'];
    const bare = await runCli(args, { env: { DMS_API_TOKEN: TOKEN } });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(
      /\$USER is not set here \(as under docker exec or cron\): say who you are with --by NAME/,
    );
    const given = await runCli([...args, '--by', 'carol'], { env: { DMS_API_TOKEN: TOKEN } });
    expect(given.code, given.stderr).toBe(0);
    const store = state.open();
    expect(store.db.prepare('SELECT created_by FROM silences').all()).toEqual([{ created_by: 'carol' }]);
  });

  it('takes --author over $USER', async () => {
    const made = await run(
      'silence',
      '--config',
      configFile,
      '--match',
      'app=shop',
      '--for',
      '30m',
      '--reason',
      'x',
      '--author',
      'bob',
    );
    expect(made.code).toBe(0);
    const store = Store.open(path.join(state.dir, 'state.db'));
    try {
      expect(getSilence(store, made.stdout.trim())?.createdBy).toBe('bob');
    } finally {
      store.close();
    }
  });

  it.each<[string, string[], RegExp]>([
    ['no --match', ['--for', '2h', '--reason', 'x'], /at least one --match is required/],
    ['no --for', ['--match', 'app=shop', '--reason', 'x'], /--for DURATION \(or --end TIME\) is required/],
    [
      'both --for and --end',
      ['--match', 'app=shop', '--for', '2h', '--end', '2099-01-01T00:00:00Z', '--reason', 'x'],
      /give --for or --end, not both/,
    ],
    [
      'a --start without zone',
      ['--match', 'app=shop', '--start', '2099-01-01T02:00', '--for', '2h', '--reason', 'x'],
      /--start: "2099-01-01T02:00" is not a time with its zone/,
    ],
    [
      'an --end before --start',
      ['--match', 'app=shop', '--start', '2099-01-01T02:00:00Z', '--end', '2099-01-01T01:00:00Z', '--reason', 'x'],
      /--end must be after the start \(2099-01-01T02:00:00Z\)/,
    ],
    ['a zero --for', ['--match', 'app=shop', '--for', '0s', '--reason', 'x'], /--for must be more than zero/],
    [
      'a bad --for',
      ['--match', 'app=shop', '--for', 'two hours', '--reason', 'x'],
      /--for: "two hours" is not a duration/,
    ],
    ['no --reason', ['--match', 'app=shop', '--for', '2h'], /--reason TEXT is required/],
    [
      "the printed line's placeholder reason",
      ['--match', 'app=shop', '--for', '2h', '--reason', '…'],
      /--reason '…' is the placeholder of a printed command: write why you silence/,
    ],
    [
      'a --for past the last time a date can show',
      ['--match', 'app=shop', '--for', '100000000d', '--reason', 'x'],
      /the silence would end after the last time a date can show/,
    ],
    ['a bad --match', ['--match', 'app', '--for', '2h', '--reason', 'x'], /--match: invalid matcher "app"/],
    ['a bad regex', ['--match', 'app=~(', '--for', '2h', '--reason', 'x'], /not a regular expression RE2 takes/],
    [
      'an unknown option',
      ['--match', 'app=shop', '--for', '2h', '--reason', 'x', '--forever'],
      /Unknown option '--forever'/,
    ],
  ])('refuses %s with exit 2 and the usage, storing nothing', async (_name, args, message) => {
    const result = await run('silence', '--config', configFile, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('usage: deploy-watchdog silence');
    expect(result.stdout).toBe('');
    const store = state.open();
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM silences').get()).toEqual({ n: 0 });
  });

  it('needs a config file, and exits 2 on a config that does not load', async () => {
    const none = await run('silence', '--match', 'app=shop', '--for', '2h', '--reason', 'x');
    expect(none).toMatchObject({ code: 2 });
    expect(none.stderr).toMatch(
      /no configuration file: give --config FILE, set \$DEPLOY_WATCHDOG_CONFIG, or create \/dev\/null\//,
    );

    const missing = await run('silences', '--config', path.join(state.dir, 'nope.yaml'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml.*file not found/);
  });
});

describe('silences', () => {
  it('says so when there are none', async () => {
    expect(await run('silences', '--config', configFile)).toMatchObject({ code: 0, stdout: 'no silences in force\n' });
    expect(await run('silences', '--config', configFile, '--json')).toMatchObject({ code: 0, stdout: '[]\n' });
  });
});

describe('silence from a past start', () => {
  it('says it mutes from now, and how long to the second', async () => {
    fireAlerts();
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const end = new Date(Date.now() + 2 * 3_600_000 + 1_234).toISOString();
    const made = await silenceShop(start, end, 'late');
    expect(made.code).toBe(0);
    // About 2 h from now (a loaded machine may take a few seconds to get here): whole seconds only.
    expect(made.stderr).toMatch(/^silenced app=shop \(its --start is past: from now\) for (2h|1h59m)[\dms]*, until /m);
    expect(made.stderr).not.toMatch(/\dms\b/);
  });
});

describe('unsilence', () => {
  it('ends a silence; --all still shows it, as expired', async () => {
    fireAlerts();
    const id = (
      await run('silence', '--config', configFile, '--match', 'app=shop', '--for', '1d', '--reason', 'maintenance')
    ).stdout.trim();
    const ended = await run('unsilence', '--config', configFile, id);
    expect(ended).toMatchObject({ code: 0 });
    expect(ended.stdout).toBe(`ended silence ${id} (app=shop)\n`);
    // Who ended it is recorded, as who made it is.
    const store = Store.open(path.join(state.dir, 'state.db'));
    try {
      expect(getSilence(store, id)).toMatchObject({ expiredBy: 'ops-alice', expireReason: null });
    } finally {
      store.close();
    }

    expect((await run('silences', '--config', configFile)).stdout).toBe('no silences in force\n');
    const all = await run('silences', '--config', configFile, '--all');
    expect(all.stdout.split('\n')[0]).toMatch(/^ID\s+STATE\s+MATCHERS/);
    expect(all.stdout).toMatch(
      new RegExp(`^${id}\\s+expired\\s+app=shop\\s+\\S+Z\\s+\\S+Z\\s+2\\s+ops-alice\\s+maintenance$`, 'm'),
    );
    // Who ended it is in the JSON too, beside who made it.
    const json = JSON.parse((await run('silences', '--config', configFile, '--all', '--json')).stdout) as unknown[];
    expect(json).toMatchObject([
      { id, state: 'expired', createdBy: 'ops-alice', expiredBy: 'ops-alice', expireReason: null },
    ]);

    const again = await run('unsilence', '--config', configFile, id);
    expect(again).toMatchObject({ code: 0, stdout: `silence ${id} (app=shop) was already over\n` });
  });

  it('asks who ends it where $USER is unset, and records --by; nothing ends without a name', async () => {
    fireAlerts();
    const id = (
      await run('silence', '--config', configFile, '--match', 'app=shop', '--for', '1d', '--reason', 'maintenance')
    ).stdout.trim();
    const bare = await runCli(['unsilence', '--config', configFile, id], { env: { DMS_API_TOKEN: TOKEN } });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(
      /\$USER is not set here \(as under docker exec or cron\): say who you are with --by NAME/,
    );
    expect((await run('silences', '--config', configFile)).stdout).toMatch(new RegExp(`^${id}\\s+active`, 'm'));

    const given = await runCli(['unsilence', '--config', configFile, '--by', 'carol', id], {
      env: { DMS_API_TOKEN: TOKEN },
    });
    expect(given).toMatchObject({ code: 0, stdout: `ended silence ${id} (app=shop)\n` });
    const store = Store.open(path.join(state.dir, 'state.db'));
    try {
      expect(getSilence(store, id)).toMatchObject({ expiredBy: 'carol' });
    } finally {
      store.close();
    }
  });

  it.each<[string, string[], RegExp]>([
    ['an unknown id', ['0123456789ab'], /no silence with id "0123456789ab"/],
    ['no id', [], /give exactly one silence ID/],
    ['two ids', ['a', 'b'], /give exactly one silence ID/],
  ])('exits 2 on %s', async (_name, args, message) => {
    const result = await run('unsilence', '--config', configFile, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});
