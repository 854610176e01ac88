/**
 * `deploy-watchdog unsilence ID`: ends a silence now; its alerts still firing are announced at the
 * next delivery round.
 */
import { describeMatchers, expireSilence } from '../alerts/silences.js';
import { systemClock } from '../lib/clock.js';
import { EXIT, UsageError, type Command } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';
import { parseCommandArgs, reportFailure, withStateStore } from './cli-helpers.js';

const usage = `usage: deploy-watchdog unsilence [--config FILE] ID

Ends the silence ID (as printed by \`deploy-watchdog silence\` and listed by \`silences\`) now.

  --config FILE   the configuration file (its state.path is the database)
                  (${CONFIG_FILE_DEFAULTS})`;

const unsilence: Command = {
  name: 'unsilence',
  summary: 'End a silence now',
  usage,
  async run(argv, io) {
    let config: string | undefined;
    let id: string;
    try {
      const { values, positionals } = parseCommandArgs(argv, { config: { type: 'string' } }, true);
      if (positionals.length !== 1) throw new UsageError('give exactly one silence ID');
      config = values.config;
      id = positionals[0]!;
    } catch (err) {
      return reportFailure(io, usage, err);
    }
    return withStateStore(io, usage, config, (store) => {
      // Who, as `silence` records its author; the console records a why as well.
      const by = (io.env.USER ?? io.env.LOGNAME ?? '').trim() || 'unknown';
      const result = expireSilence(store, id, systemClock.now(), { by });
      switch (result.outcome) {
        case 'unknown-id':
          io.stderr.write(`error: no silence with id ${JSON.stringify(id)} (see \`deploy-watchdog silences --all\`)\n`);
          return EXIT.usage;
        case 'already-over':
          io.stdout.write(
            `silence ${result.silence.id} (${describeMatchers(result.silence.matchers)}) was already over\n`,
          );
          return EXIT.ok;
        case 'expired':
          io.stdout.write(`ended silence ${result.silence.id} (${describeMatchers(result.silence.matchers)})\n`);
          return EXIT.ok;
      }
    });
  },
};

export default unsilence;
