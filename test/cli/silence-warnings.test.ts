/**
 * `silence` says how many open alerts a new silence matches, and warns (without refusing) of a
 * --match that names a label no alert carries or a value no alert so far has: a typo would
 * otherwise mute nothing, silently.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { silenceMatchersFor } from '../../src/alerts/silence-matchers.js';
import { createSilence, listSilences } from '../../src/alerts/silences.js';
import { Store } from '../../src/state/store.js';
import { finding, fireFindings, tempState, type TempState } from '../alerts/fixtures.js';
import { runCli, writeStateCommandConfig } from '../helpers/cli-harness.js';

let state: TempState;
let configFile: string;

beforeEach(() => {
  state = tempState();
  configFile = writeStateCommandConfig(state.dir);
  fireFindings(path.join(state.dir, 'state.db'), 'urls', [
    finding('cert/shop', { check: 'certificates', labels: { check: 'certificates', app: 'shop' } }),
    finding('url/shop', { check: 'url_checks', labels: { check: 'url_checks', app: 'shop' } }),
    // An app name from the service that holds a terminal escape (set the window title).
    finding('url/evil', { check: 'url_checks', labels: { check: 'url_checks', app: 'evil\u001b]0;pwned\u0007' } }),
  ]);
});
afterEach(() => state.cleanup());

async function silence(...matches: string[]) {
  return runCli(
    ['silence', '--config', configFile, ...matches.flatMap((m) => ['--match', m]), '--for', '1h', '--reason', 'test'],
    { env: { USER: 'ops-bob' } },
  );
}

/** The warning lines of a command's standard error. */
const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('warning: '));

describe('silence warnings', () => {
  it.each<[string[], number, unknown[]]>([
    [['app=shop'], 2, []],
    [['app=~sh.*'], 2, []],
    [['app!=shop'], 1, []],
    [['check=certificates'], 1, []],
    // A check no alert has yet, but one the daemon has: made ahead of time, not a typo.
    [['check=backups'], 0, []],
    [
      ['ap=shop'],
      0,
      [
        'warning: no alert has a label "ap" (labels: action, app, check, environment_type, namespace, project, reason, server, step, workflow), so ap=shop mutes nothing until one does',
      ],
    ],
    [
      ['app=shpo'],
      0,
      [
        'warning: no alert so far matches app=shpo (values of app: evil\\u{1b}]0;pwned\\u{7}, shop); check the spelling',
      ],
    ],
    [['app=~sho'], 0, [expect.stringMatching(/^warning: no alert so far matches app=~sho \(values of app: /)]],
    [
      ['namespace=acme', 'app=shop'],
      0,
      ['warning: no alert so far matches namespace=acme (no alert has that label yet); check the spelling'],
    ],
  ])('%j matches %i open alerts now and warns %j', async (matches, open, said) => {
    const made = await silence(...matches);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^[0-9a-f]{12}\n$/);
    expect(made.stderr).toContain(`; it matches ${open} open alert${open === 1 ? '' : 's'} now\n`);
    expect(warnings(made.stderr)).toEqual(said);
    // Warned or not, the silence is made: it may be for an alert still to come.
    const store = Store.open(path.join(state.dir, 'state.db'));
    try {
      expect(listSilences(store, { now: Date.now() }).map((s) => s.id)).toEqual([made.stdout.trim()]);
    } finally {
      store.close();
    }
  });

  it('never lets a label value act on the terminal', async () => {
    const made = await silence('app=nope');
    expect(made.stderr).not.toContain('\u001b');
    expect(made.stderr).not.toContain('\u0007');
  });
});

describe('a silence of a label value from the service, on a terminal', () => {
  // The matchers Slack's "Silence 1h" button and the console's form make from the alert's labels.
  const EVIL = 'evil\u001b]0;pwned\u0007';
  const silenceOfEvil = () => {
    const store = Store.open(path.join(state.dir, 'state.db'));
    try {
      const alert = alertStoreOf(store).get('url/evil')!;
      const matchers = silenceMatchersFor(alert)!;
      expect(matchers).toContainEqual({ name: 'app', op: '=', value: EVIL });
      return createSilence(store, {
        matchers,
        durationMs: 3_600_000,
        reason: 'noisy',
        createdBy: 'U1',
        now: Date.now(),
      });
    } finally {
      store.close();
    }
  };

  it('silence says what it mutes with the value written out, not obeyed', async () => {
    const made = await silence(`app=${EVIL}`);
    expect(made.code).toBe(0);
    expect(made.stderr).toContain('silenced app=evil\\u{1b}]0;pwned\\u{7} for 1h');
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(made.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  it('unsilence says which silence it ended with the value written out, not obeyed', async () => {
    const { id } = silenceOfEvil();
    const ended = await runCli(['unsilence', '--config', configFile, id], { env: { USER: 'ops-bob' } });
    expect(ended.code).toBe(0);
    expect(ended.stdout).toBe(`ended silence ${id} (check=url_checks, app=evil\\u{1b}]0;pwned\\u{7})\n`);
  });
});
