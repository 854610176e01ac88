/**
 * `deploy-watchdog ack` and `unack`: acknowledging a firing alert from a shell, the same state,
 * timeline and words as the console and Slack (`src/alerts/acknowledge.ts`). The alert is named
 * by its id (as `alerts` lists it) or its fingerprint. The daemon routes the event at its next
 * delivery round; this process only writes it.
 */
import { acknowledge, acknowledgeText, unacknowledge, type AcknowledgeRequest } from '../alerts/acknowledge.js';
import { alertId, findAlert } from '../alerts/alert-id.js';
import { systemClock } from '../lib/clock.js';
import { actingPerson, defineCommand, terminalSafe, withStateStore } from './cli-helpers.js';
import { EXIT, print, UsageError, type Command } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

/** The two commands, by name. */
export type AcknowledgeCommandName = 'ack' | 'unack';

const WHAT: Record<AcknowledgeCommandName, { text: string; comment: string }> = {
  ack: {
    text: `Acknowledges the firing alert ALERT: you have it. Its repeats stop until it resolves, its
severity rises (both still notify, and end the acknowledgement), or someone gives it back with
\`deploy-watchdog unack\`. Recorded in the alert's timeline with who, where (cli) and why.`,
    comment: 'what you are doing about it',
  },
  unack: {
    text: `Gives the acknowledgement of the firing alert ALERT back: its repeats resume (one already
due goes at the next cycle). Recorded in the alert's timeline with who, where (cli) and why.`,
    comment: 'why you give it back',
  },
};

/** The command `ack` or `unack`. */
export function acknowledgeCommand(name: AcknowledgeCommandName): Command {
  const what = WHAT[name];
  const usage = `usage: deploy-watchdog ${name} [--config FILE] [--by NAME] [--comment TEXT] ALERT

${what.text}
ALERT is the alert's id, as \`deploy-watchdog alerts\` lists it, or its fingerprint.
The daemon tells the channels that show acknowledgements at its next delivery round.

  --config FILE    the configuration file (its state.path is the database)
                   (${CONFIG_FILE_DEFAULTS})
  --by NAME        who; defaults to $USER (required where $USER is unset)
  --comment TEXT   ${what.comment} (optional)`;

  return defineCommand({
    usage,
    options: { by: { type: 'string' }, comment: { type: 'string' } },
    positionals: true,
    parse: ({ values, positionals }, io) => {
      if (positionals.length !== 1) throw new UsageError('give exactly one alert (its id or fingerprint)');
      return {
        ref: positionals[0]!,
        by: actingPerson(values.by, io.env),
        comment: values.comment,
      };
    },
    run: (args, io, file) =>
      withStateStore(io, file, (store) => {
        const found = findAlert(store, args.ref);
        if (found.outcome === 'ambiguous') {
          const which = found.fingerprints.map((f) => `  ${terminalSafe(f)}\n`).join('');
          const text = `error: ${found.fingerprints.length} alerts have the id ${args.ref}; give a fingerprint:\n`;
          return print(io.stderr, `${text}${which}`, EXIT.usage);
        }
        if (found.outcome === 'not_found') {
          const text = `no alert ${JSON.stringify(terminalSafe(args.ref))} (see \`deploy-watchdog alerts\`): nothing changed`;
          return print(io.stderr, `error: ${text}\n`, EXIT.usage);
        }
        const request: AcknowledgeRequest = {
          ...args,
          fingerprint: found.alert.fingerprint,
          via: 'cli',
          now: systemClock.now(),
        };
        const result = name === 'ack' ? acknowledge(store, request) : unacknowledge(store, request);
        // Names, comments and summaries are people's and the service's text: shown, never obeyed.
        io.stdout.write(`${alertId(found.alert.fingerprint)}  ${terminalSafe(found.alert.summary)}\n`);
        return print(io.stdout, `${terminalSafe(acknowledgeText(result))}\n`);
      }),
  });
}
