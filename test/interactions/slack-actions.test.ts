/**
 * What each button does, on a real SQLite file: the same outcome words as the console and the CLI,
 * and what a click that can change nothing is told (the alert pending or over, nobody to give
 * back, no safe silence, no remediation), with nothing written.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventsOfAlert } from '../../src/alerts/alert-store.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import { listSilences } from '../../src/alerts/silences.js';
import type { Finding } from '../../src/detectors/finding.js';
import { runAction, type ActionDeps } from '../../src/interactions/slack-actions.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { ButtonAction } from '../../src/notify/channels/slack-app-buttons.js';
import type { Store } from '../../src/state/store.js';
import { finding, HOUR, tempState, type TempState } from '../alerts/fixtures.js';

let state: TempState;
let store: Store;
let clock: ManualClock;
let woken = 0;

beforeEach(() => {
  state = tempState();
  store = state.open();
  clock = new ManualClock();
  woken = 0;
});
afterEach(() => state.cleanup());

function cycle(findings: Finding[], forCycles = 1): void {
  store.transaction(() =>
    applyFindings(store, { job: 'runs', findings, now: clock.now() }, { forCycles, repeatIntervalMs: 4 * HOUR }),
  );
}

const deps = (): ActionDeps => ({ store, remediation: undefined, wake: () => (woken += 1), log: silentLogger });
const who = { label: 'alice (U0ALICE)', channel: 'ops-app' };
const run = (action: ButtonAction, fingerprint = 'a') => runAction(deps(), action, fingerprint, who, clock.now());

describe('runAction', () => {
  it('acknowledges as alice via slack, wakes the delivery, and a second click changes nothing', () => {
    cycle([finding('a')]);
    expect(run('acknowledge')).toMatchObject({
      outcome: 'done',
      text: 'Acknowledged by alice (U0ALICE): its repeats stop until it resolves or gets worse.',
      note: 'Acknowledged by alice (U0ALICE) in Slack',
    });
    expect(woken).toBe(1);
    expect(eventsOfAlert(store, 'a').at(-1)).toMatchObject({ kind: 'acknowledged', acknowledgement: { via: 'slack' } });
    expect(run('acknowledge')).toMatchObject({
      outcome: 'unchanged',
      text: expect.stringMatching(/^Already acknowledged/),
    });
    expect(run('unacknowledge')).toMatchObject({
      outcome: 'done',
      note: 'Acknowledgement by alice (U0ALICE) given back by alice (U0ALICE) in Slack',
    });
    expect(run('unacknowledge')).toMatchObject({
      outcome: 'unchanged',
      text: 'Nobody has acknowledged it: nothing changed.',
    });
    expect(woken).toBe(2);
  });

  it.each([
    [
      'names the config file as the messages do',
      '/home/ops/deploy-watchdog/watchdog.yaml',
      '--config /home/ops/deploy-watchdog/watchdog.yaml ',
    ],
    ['names none where the default path finds it', undefined, ''],
  ])('the reply to Silence %s, as a line to paste', (_what, commandConfigFile, config) => {
    cycle([finding('a')]);
    const result = runAction({ ...deps(), commandConfigFile }, 'silence_1h', 'a', who, clock.now());
    const [silence] = listSilences(store, { now: clock.now() });
    expect(result.text).toMatch(new RegExp(` or with deploy-watchdog unsilence ${config}${silence!.id}$`));
  });

  it('silences on the alert’s own matchers, by slack:<who>, with a reason saying where from', () => {
    cycle([finding('a')]);
    expect(run('silence_1h')).toMatchObject({
      outcome: 'done',
      text: expect.stringMatching(/^Silenced for 1h, until /),
    });
    expect(listSilences(store, { now: clock.now() })).toMatchObject([
      {
        createdBy: 'slack:alice (U0ALICE)',
        matchers: [
          { name: 'check', op: '=', value: 'failed_runs' },
          { name: 'app', op: '=', value: 'shop' },
        ],
        reason: expect.stringMatching(/^Silence 1h from Slack \(ops-app\), on alert [0-9a-f]{8}: Problem a$/),
        endsAt: clock.now() + HOUR,
      },
    ]);
    // A longer one replaces nothing: it is a new silence that outlasts the first.
    expect(run('silence_4h')).toMatchObject({ outcome: 'done' });
    expect(run('silence_1h')).toMatchObject({
      outcome: 'unchanged',
      text: expect.stringMatching(/^Already silenced until/),
    });
    expect(listSilences(store, { now: clock.now() })).toHaveLength(2);
  });

  it.each<[string, () => void, ButtonAction, RegExp]>([
    ['a pending alert', () => cycle([finding('a')], 3), 'acknowledge', /not firing yet \(pending\)/],
    ['a pending alert', () => cycle([finding('a')], 3), 'silence_4h', /not firing yet \(pending\): nothing to silence/],
    [
      'a resolved alert',
      () => {
        cycle([finding('a')]);
        cycle([]);
      },
      'silence_1h',
      /^It was resolved at .*: nothing to silence, nothing changed\.$/,
    ],
    ['an alert never seen', () => undefined, 'silence_1h', /no such alert/],
    ['an alert never seen', () => undefined, 'acknowledge', /There is no alert a/],
  ])('is stale on %s (%s)', (_what, prepare, action, text) => {
    prepare();
    const before = {
      events: eventsOfAlert(store, 'a').length,
      silences: listSilences(store, { now: clock.now() }).length,
    };
    expect(run(action)).toMatchObject({ outcome: 'stale', text: expect.stringMatching(text) });
    expect(eventsOfAlert(store, 'a')).toHaveLength(before.events);
    expect(listSilences(store, { now: clock.now() })).toHaveLength(before.silences);
  });

  it('makes no silence where none covers the alert alone (an app’s run without its app)', () => {
    cycle([finding('a', { labels: { check: 'failed_runs', environment_type: 'staging' } })]);
    expect(run('silence_1h')).toMatchObject({
      outcome: 'unchanged',
      text: expect.stringMatching(/^No silence covers this alert alone/),
    });
    expect(listSilences(store, { now: clock.now() })).toEqual([]);
  });

  it('asks nothing of a remediation that is not configured', () => {
    cycle([finding('a')]);
    expect(run('remediate')).toEqual({
      outcome: 'unchanged',
      text: 'No remediation policy is configured: nothing was sent.',
    });
  });
});
