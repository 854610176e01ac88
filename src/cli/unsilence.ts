/**
 * `deploy-watchdog unsilence ID`: ends a silence now; its alerts still firing are announced at the
 * next delivery round.
 */
import { describeMatchers, expireSilence } from '../alerts/silences.js';
import { systemClock } from '../lib/clock.js';
import { EXIT, print, UsageError } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';
import { defineCommand, withStateStore } from './cli-helpers.js';

const usage = `usage: deploy-watchdog unsilence [--config FILE] ID

Ends the silence ID (as printed by \`deploy-watchdog silence\` and listed by \`silences\`) now.

  --config FILE   the configuration file (its state.path is the database)
                  (${CONFIG_FILE_DEFAULTS})`;

const unsilence = defineCommand({
  name: 'unsilence',
  summary: 'End a silence now',
  usage,
  options: {},
  positionals: true,
  parse: ({ positionals }) => {
    if (positionals.length !== 1) throw new UsageError('give exactly one silence ID');
    return positionals[0]!;
  },
  run: (id, io, file) =>
    withStateStore(io, usage, file, (store) => {
      // Who, as `silence` records its author; the console records a why as well.
      const by = (io.env.USER ?? io.env.LOGNAME ?? '').trim() || 'unknown';
      const result = expireSilence(store, id, systemClock.now(), { by });
      if (result.outcome === 'unknown-id') {
        const hint = '(see `deploy-watchdog silences --all`)';
        return print(io.stderr, `error: no silence with id ${JSON.stringify(id)} ${hint}\n`, EXIT.usage);
      }
      const which = `${result.silence.id} (${describeMatchers(result.silence.matchers)})`;
      return print(
        io.stdout,
        result.outcome === 'expired' ? `ended silence ${which}\n` : `silence ${which} was already over\n`,
      );
    }),
});

export default unsilence;
