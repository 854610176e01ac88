import { describe, expect, it } from 'vitest';
import { unknownStateWords, unknownStateWordWarning } from '../../src/app/unknown-state-words.js';
import { StateWordTally, type StateRecord } from '../../src/collectors/state-word-tally.js';
import { parseConfig } from '../../src/config/load-config.js';
import { stateListsFromConfig } from '../../src/detectors/registry.js';

const MINIMAL = 'api:\n  base_url: http://127.0.0.1:1\n  token: t\n';
const lists = (yaml = '') => stateListsFromConfig(parseConfig(MINIMAL + yaml, {}, 'test.yaml').checks);

function tally(record: StateRecord, words: string[]): StateWordTally {
  const t = new StateWordTally(record);
  for (const w of words) t.see(w);
  return t;
}

describe('state words no checks.* list names', () => {
  it.each([
    ['run', ['done', 'error', 'queued', 'running', 'cancelled'], ''],
    ['run', ['done', 'failed', 'failed', 'canceled'], 'failed ×2, canceled ×1'],
    ['server', ['running', 'provisioning', 'error', 'stopped', 'unreachable'], ''],
    ['server', ['up', 'running'], 'up ×1'],
    ['app', ['running', 'deploying', 'stopped', 'error'], ''],
    ['app', ['active', 'active', 'suspended'], 'active ×2, suspended ×1'],
    ['upgrade', ['requested', 'testing', 'standby', 'done', 'failed'], ''],
    ['upgrade', ['on_hold'], 'on_hold ×1'],
    ['installer', ['running', 'stopped', 'error'], ''],
    ['installer', ['failed', 'active'], 'active ×1, failed ×1'],
  ] as const)('%s states %j: unknown %j', (record, words, expected) => {
    const unknown = unknownStateWords(tally(record, [...words]), lists());
    expect(unknown.map((u) => `${u.word} ×${u.count}`).join(', ')).toBe(expected);
  });

  it('counts a word known once a list names it, switched-off checks included', () => {
    const mine = lists('checks:\n  failed_runs: { enabled: false, failed_states: [failed] }\n');
    expect(unknownStateWords(tally('run', ['failed']), mine)).toEqual([]);
  });

  it('an empty other_states list is allowed, and then every fine word is reported', () => {
    const mine = lists('checks:\n  servers: { other_states: [] }\n');
    expect(unknownStateWords(tally('server', ['running']), mine)).toEqual([
      { record: 'server', word: 'running', count: 1 },
    ]);
  });

  it('says where the word came from and every list it could go in, with what each holds', () => {
    const all = lists();
    const text = unknownStateWordWarning({ record: 'run', word: 'failed', count: 3 }, all);
    expect(text).toBe(
      'runs.list reports the run state "failed" (3 runs), which no list of checks.* names, so no check judges them. ' +
        'Add it to the list it means (checks.failed_runs.failed_states: error; checks.failed_runs.succeeded_states: done; ' +
        'checks.failed_runs.other_states: cancelled; checks.stuck_runs.active_states: queued, running)',
    );
    // A word of the service is quoted as JSON: a line break or quote in it stays data in the log line.
    expect(unknownStateWordWarning({ record: 'app', word: 'a"\nb', count: 1 }, all)).toContain('"a\\"\\nb" (1 app)');
  });
});
