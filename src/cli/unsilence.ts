/**
 * `deploy-watchdog unsilence ID`: ends a silence now; its alerts still firing are announced at the
 * next delivery round.
 */
import { describeMatchers, expireSilence } from '../alerts/silences.js';
import { systemClock } from '../lib/clock.js';
import { EXIT, print, UsageError } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';
import { actingPerson, defineCommand, terminalSafe, withStateStore } from './cli-helpers.js';

const usage = `usage: deploy-watchdog unsilence [--config FILE] [--by NAME] ID

Ends the silence ID (as printed by \`deploy-watchdog silence\` and listed by \`silences\`) now.

  --config FILE   the configuration file (its state.path is the database)
                  (${CONFIG_FILE_DEFAULTS})
  --by NAME       who; defaults to $USER (required where $USER is unset)`;

const unsilence = defineCommand({
  usage,
  options: { by: { type: 'string' } },
  positionals: true,
  parse: ({ values, positionals }) => {
    if (positionals.length !== 1) throw new UsageError('give exactly one silence ID');
    return { id: positionals[0]!, by: values.by };
  },
  run: ({ id, by: given }, io, file) =>
    withStateStore(io, file, (store) => {
      // Who, as `silence` records its author (never an "unknown" nobody can trace); the console
      // records a why as well.
      const result = expireSilence(store, id, systemClock.now(), { by: actingPerson(given, io.env) });
      if (result.outcome === 'unknown-id') {
        const hint = '(see `deploy-watchdog silences --all`)';
        return print(io.stderr, `error: no silence with id ${JSON.stringify(id)} ${hint}\n`, EXIT.usage);
      }
      // Label values are the service's text (the console and Slack make such silences): shown, never obeyed.
      const which = `${result.silence.id} (${terminalSafe(describeMatchers(result.silence.matchers))})`;
      return print(
        io.stdout,
        result.outcome === 'expired' ? `ended silence ${which}\n` : `silence ${which} was already over\n`,
      );
    }),
});

export default unsilence;
