/**
 * `ack` and `unack`, run in-process through `main` against a real state file without the daemon's
 * secrets: the alert named by its id (as `alerts` lists it) or its fingerprint, recorded with who
 * (--by, else $USER), where (cli) and why (--comment), and shown as `acked` by `alerts`. A command
 * the alert has gone past changes nothing and says so; an unknown or ambiguous id and bad words
 * are usage errors (2) that write nothing; people's text is shown, never obeyed by the terminal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import { alertId } from '../../src/alerts/alert-id.js';
import { eventsOfAlert, alertStoreOf } from '../../src/alerts/alert-store.js';
import { Store } from '../../src/state/store.js';
import { finding, fireFindings, tempState, type TempState } from '../alerts/fixtures.js';
import { runCli, writeConfig, writeStateCommandConfig, type CliResult } from '../helpers/cli-harness.js';

const FP = 'failed_runs/run/5981';
let state: TempState;
let configFile: string;

beforeEach(() => {
  state = tempState();
  configFile = writeStateCommandConfig(state.dir);
  fireFindings(path.join(state.dir, 'state.db'), 'runs', [
    finding(FP, { severity: 'critical', summary: 'Update of shop failed' }),
    finding('failed_runs/run/7', { summary: 'Update of blog failed' }),
  ]);
});
afterEach(() => state.cleanup());

/** One command line, as ops-alice, with the secrets unset. */
function run(...argv: string[]): Promise<CliResult> {
  return runCli([argv[0]!, '--config', configFile, ...argv.slice(1)], { env: { USER: 'ops-alice' } });
}

/** The state file, read as another process would. */
function read<T>(fn: (store: Store) => T): T {
  const store = state.open();
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

const record = () =>
  read((s) => ({ alert: alertStoreOf(s).get(FP), events: eventsOfAlert(s, FP).map((e) => e.id), queued: queued(s) }));
const queued = (s: Store) =>
  (s.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM unrouted_events').get() as { n: number }).n;

describe('ack', () => {
  it.each<[string, string[], string, string | null]>([
    ['by its id, as $USER', [alertId(FP)], 'ops-alice', null],
    ['by its fingerprint, --by and --comment', [FP, '--by', 'bob', '--comment', 'rolling back'], 'bob', 'rolling back'],
  ])('acknowledges an alert %s, for the daemon to route', async (_name, args, by, comment) => {
    const result = await run('ack', ...args);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      `${alertId(FP)}  Update of shop failed\nAcknowledged by ${by}: its repeats stop until it resolves or gets worse.\n`,
    );
    const after = record();
    expect(after.alert?.acknowledgement).toMatchObject({ by, via: 'cli', comment });
    expect(read((s) => eventsOfAlert(s, FP).map((e) => e.kind))).toEqual(['firing', 'acknowledged']);
    expect(after.queued).toBe(1);
  });

  it.each(['ack', 'unack'])(
    '%s asks for --by when $USER is unset (docker exec, cron), writing nothing',
    async (name) => {
      if (name === 'unack') await run('ack', FP);
      const before = record();
      const bare = await runCli([name, '--config', configFile, FP], { env: {} });
      expect(bare.code).toBe(2);
      expect(bare.stderr).toMatch(
        /\$USER is not set here \(as under docker exec or cron\): say who you are with --by NAME/,
      );
      expect(record()).toEqual(before);
      const given = await runCli([name, '--config', configFile, FP, '--by', 'carol'], { env: {} });
      expect(given.code, given.stderr).toBe(0);
      expect(read((st) => eventsOfAlert(st, FP).at(-1)?.acknowledgement?.by)).toBe('carol');
    },
  );

  it('shows the alert acked in `alerts`, and who in --json', async () => {
    await run('ack', FP, '--comment', 'on it');
    const table = await run('alerts');
    const line = table.stdout.split('\n').find((l) => l.startsWith(alertId(FP)))!;
    expect(line).toMatch(new RegExp(`^${alertId(FP)}  \\S+  acked +critical`));
    expect(table.stdout).toMatch(/\n2 open \(2 firing, 1 of them acked, 0 pending\)\n$/);
    const json = JSON.parse((await run('alerts', '--json')).stdout) as {
      id: string;
      fingerprint: string;
      status: string;
      acknowledgement: unknown;
    }[];
    expect(json.map((a) => [a.id, a.status, a.acknowledgement])).toEqual([
      [alertId(FP), 'firing', { by: 'ops-alice', via: 'cli', at: expect.stringMatching(/Z$/), comment: 'on it' }],
      [alertId('failed_runs/run/7'), 'firing', null],
    ]);
  });

  it('changes nothing for an alert someone has already, and says who', async () => {
    read((s) => acknowledge(s, { fingerprint: FP, by: 'carol', via: 'slack', now: Date.now() }));
    const before = record();
    const result = await run('ack', FP);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nAlready acknowledged by carol \(slack, .* UTC\): nothing changed\.\n$/);
    expect(record()).toEqual(before);
  });

  it('changes nothing for an alert resolved meanwhile, and says so', async () => {
    fireFindings(path.join(state.dir, 'state.db'), 'runs', []);
    const before = record();
    const result = await run('ack', alertId(FP));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nIt was resolved at .* UTC: nothing to acknowledge, nothing changed\.\n$/);
    expect(record()).toEqual(before);
  });

  it.each<[string, string[], RegExp]>([
    [
      'an unknown alert',
      ['0123abcd'],
      /^error: no alert "0123abcd" \(see `deploy-watchdog alerts`\): nothing changed\n$/,
    ],
    ['no alert', [], /give exactly one alert/],
    ['two alerts', [FP, 'failed_runs/run/7'], /give exactly one alert/],
    ['a comment too long', [FP, '--comment', 'x'.repeat(1001)], /error: the comment is 1001 characters long/],
    ['an unknown option', [FP, '--for', '1h'], /Unknown option '--for'/],
  ])('refuses %s (2) and writes nothing', async (_name, args, message) => {
    const before = record();
    const result = await run('ack', ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(record()).toEqual(before);
  });

  it('refuses an id two alerts share, listing their fingerprints', async () => {
    // Two fingerprints whose ids are both c0d93429 (found by search).
    fireFindings(path.join(state.dir, 'state.db'), 'urls', [
      finding('failed_runs/run/67499'),
      finding('failed_runs/run/129154'),
    ]);
    const result = await run('ack', 'c0d93429');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: 2 alerts have the id c0d93429; give a fingerprint:\n  failed_runs/run/129154\n  failed_runs/run/67499\n',
    );
  });

  it('shows a hostile name and summary as text, never as escape sequences', async () => {
    fireFindings(path.join(state.dir, 'state.db'), 'urls', [
      finding('hostile', { summary: 'Update of \u001b]0;owned\u0007shop failed' }),
    ]);
    const result = await run('ack', 'hostile', '--by', 'eve\u001b[2J');
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('\u001b');
    expect(result.stdout).toContain('Acknowledged by eve\\u{1b}[2J');
  });
});

describe('ack and unack', () => {
  it.each(['ack', 'unack'])('%s refuses a state file that does not exist (1), and creates none', async (command) => {
    const missing = path.join(state.dir, 'elsewhere', 'state.db');
    const file = writeConfig(
      state.dir,
      ['api: { base_url: "http://127.0.0.1:9", token: "${DMS_API_TOKEN}" }', `state: { path: "${missing}" }`],
      'elsewhere.yaml',
    );
    const result = await runCli([command, '--config', file, FP, '--by', 'ops-alice'], { env: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/does not exist; is state\.path right\?/);
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe('unack', () => {
  it('gives an acknowledgement back, and says so when there was none', async () => {
    const none = await run('unack', FP);
    expect(none).toMatchObject({ code: 0 });
    expect(none.stdout).toMatch(/\nNobody has acknowledged it: nothing changed\.\n$/);
    await run('ack', FP, '--by', 'bob');
    const result = await run('unack', alertId(FP), '--comment', 'handing over');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nThe acknowledgement by bob is given back: its repeats resume\.\n$/);
    expect(record().alert?.acknowledgement).toBeNull();
    const last = read((s) => eventsOfAlert(s, FP).at(-1));
    expect(last).toMatchObject({
      kind: 'unacknowledged',
      acknowledgement: { by: 'ops-alice', via: 'cli', comment: 'handing over' },
    });
  });

  it('prints its usage for --help', async () => {
    const result = await runCli(['unack', '--help']);
    expect(result.stdout).toMatch(
      /^usage: deploy-watchdog unack \[--config FILE\] \[--by NAME\] \[--comment TEXT\] ALERT\n/,
    );
  });
});
