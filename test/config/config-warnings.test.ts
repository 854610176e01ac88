/**
 * What `validate` warns of (and the daemon logs at start and reload) without refusing the file:
 * here, a state word that two `checks.*` lists of one kind of record both claim.
 */
import { describe, expect, it } from 'vitest';
import { configWarnings } from '../../src/config/config-warnings.js';
import { parseConfig } from '../../src/config/load-config.js';

const MINIMAL = ['api:', '  base_url: https://manage.example.com', '  token: t0ken-1234', 'notify:'];
const withChecks = (...lines: string[]) =>
  parseConfig([...MINIMAL, '  channels: [{ name: log, type: log }]', 'checks:', ...lines, ''].join('\n'), {}, 'x.yaml');

describe('configWarnings: a state word in two lists', () => {
  it('says none for the default lists', () => {
    expect(configWarnings(withChecks('  failed_runs: {}'))).toEqual([]);
  });

  it('names the word and both lists, within one check', () => {
    const config = withChecks('  failed_runs: { other_states: [cancelled, error] }');
    expect(configWarnings(config)).toEqual([
      {
        path: 'checks.failed_runs.other_states',
        message:
          '"error" is also in checks.failed_runs.failed_states, which means something else: keep each state word in one list',
      },
    ]);
  });

  it('names the word and both lists across two checks of one kind of record', () => {
    const config = withChecks('  stuck_runs: { active_states: [queued, running, error] }');
    expect(configWarnings(config).map((w) => `${w.path}: ${w.message}`)).toEqual([
      'checks.stuck_runs.active_states: "error" is also in checks.failed_runs.failed_states, which means something else: keep each state word in one list',
    ]);
  });
});

describe('configWarnings: a job scheduled by the second', () => {
  const withJobs = (...lines: string[]) =>
    parseConfig([...MINIMAL, '  channels: [{ name: log, type: log }]', 'jobs:', ...lines, ''].join('\n'), {}, 'x.yaml');

  it('says a schedule of 6 fields whose seconds hold a *, and no other', () => {
    const config = withJobs('  runs: "*/5 * * * * *"', '  urls: "0 */15 * * * *"', '  backups: "@hourly"');
    expect(configWarnings(config)).toEqual([
      {
        path: 'jobs.runs',
        message:
          'runs more than once a minute: a schedule of 6 fields starts with seconds ("*/5" here); for minutes write 5 fields, or start the 6 with 0',
      },
    ]);
  });
});
