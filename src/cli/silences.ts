/**
 * `deploy-watchdog silences`: lists silences in force or scheduled (or all, with --all), each with
 * its state and how many open alerts it covers right now.
 */
import { formatMatcher } from '../alerts/matchers.js';
import { silenceListing } from '../alerts/silence-listing.js';
import { describeMatchers } from '../alerts/silences.js';
import { systemClock } from '../lib/clock.js';
import { print } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';
import { defineCommand, table, terminalJson, withStateStore } from './cli-helpers.js';
import { formatUtc } from '../lib/format-utc.js';

const usage = `usage: deploy-watchdog silences [--config FILE] [--json] [--all]

Lists the silences not yet over: id, state (active, or scheduled: a maintenance window that
starts later and mutes nothing before then), matchers, from, until, how many open alerts each
covers now, author and reason.

  --config FILE   the configuration file (its state.path is the database)
                  (${CONFIG_FILE_DEFAULTS})
  --json          one JSON array instead of a table
  --all           include silences that are over (ended, or expired by hand)`;

const silences = defineCommand({
  usage,
  options: { json: { type: 'boolean' }, all: { type: 'boolean' } },
  parse: ({ values }) => values,
  run: (values, io, file) =>
    withStateStore(io, file, (store) => {
      const rows = silenceListing(store, { now: systemClock.now(), includeExpired: values.all === true });
      if (values.json) {
        const out = rows.map(({ silence: s, state, openAlerts }) => ({
          id: s.id,
          state,
          matchers: s.matchers.map(formatMatcher),
          startsAt: formatUtc(s.startsAt, 'iso'),
          endsAt: formatUtc(s.endsAt, 'iso'),
          expiredAt: s.expiredAt === null ? null : formatUtc(s.expiredAt, 'iso'),
          expiredBy: s.expiredBy,
          expireReason: s.expireReason,
          reason: s.reason,
          createdBy: s.createdBy,
          createdAt: formatUtc(s.createdAt, 'iso'),
          openAlerts,
        }));
        return print(io.stdout, `${terminalJson(out)}\n`);
      }
      if (rows.length === 0) return print(io.stdout, values.all ? 'no silences\n' : 'no silences in force\n');
      const header = ['ID', 'STATE', 'MATCHERS', 'FROM', 'UNTIL', 'ALERTS', 'AUTHOR', 'REASON'];
      const body = rows.map(({ silence: s, state, openAlerts, until }) => [
        s.id,
        state,
        describeMatchers(s.matchers),
        formatUtc(s.startsAt, 'iso'),
        formatUtc(until, 'iso'),
        String(openAlerts),
        s.createdBy,
        s.reason,
      ]);
      return print(io.stdout, table([header, ...body]));
    }),
});

export default silences;
