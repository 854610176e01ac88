import { silentLogger } from '../lib/logger.js';
import { secretsIn } from '../config/secret.js';
import { Secret } from '../lib/secret.js';
import { systemClock } from '../lib/clock.js';
import { buildChannels, closeChannels } from '../notify/build-channels.js';
import type { NoticeNotification } from '../notify/channels/channel.js';
import { sendWithTimeout } from '../notify/send-with-timeout.js';
import { defineCommand, loadCommandConfig } from './cli-helpers.js';
import { EXIT } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog notify-test [--config FILE] [--channel NAME]

Sends a test message to every channel of notify.channels (or only to NAME) and prints one line
per channel: "ok", "failed: reason", or "partly failed: reason" when an SMTP server took the
message for some recipients and refused the others. Exit 0 when every channel took it for every
recipient, 1 when any failed, 2 for a bad config or usage.

  --config FILE    the configuration file (${CONFIG_FILE_DEFAULTS})
  --channel NAME   only this channel`;

/** `deploy-watchdog notify-test [--config FILE] [--channel NAME]`. */
const notifyTest = defineCommand({
  usage,
  options: { channel: { type: 'string' } },
  parse: ({ values }) => values.channel,
  async run(only, io, file) {
    const { config } = loadCommandConfig(file, io);
    const configs = config.notify.channels.filter((c) => only === undefined || c.name === only);
    if (configs.length === 0) {
      const known = config.notify.channels.map((c) => c.name).join(', ') || 'none';
      io.stderr.write(
        only === undefined
          ? `${file}: notify.channels is empty; nothing to test\n`
          : `${file}: no channel named ${JSON.stringify(only)} in notify.channels (known: ${known})\n`,
      );
      return EXIT.usage;
    }
    const channels = buildChannels(configs, {
      logger: silentLogger,
      clock: systemClock,
      consoleUrl: config.server.console.public_url,
    });
    const notice: NoticeNotification = {
      type: 'notice',
      topic: 'test',
      title: 'deploy-watchdog test message',
      severity: 'ok',
      fields: [{ label: 'Sent', value: new Date(systemClock.now()).toISOString() }],
      lines: ['If you can read this, deploy-watchdog can reach this channel.'],
    };
    let failed = 0;
    try {
      // One at a time, in config order, so the output reads like the config.
      for (const c of configs) {
        const channel = channels.get(c.name);
        if (!channel) continue;
        const result = await sendWithTimeout(channel, notice, {
          clock: systemClock,
          timeoutMs: config.notify.delivery.timeout,
          signal: io.signal,
        });
        const scrub = (text: string) => Secret.scrub(text, secretsIn(c));
        // A part refused (delivered to some recipients only) is a failure for the others, said as such.
        const said =
          result.outcome !== 'ok'
            ? `failed: ${scrub(result.reason)}${OUTCOME_NOTES[result.outcome]}`
            : result.refused !== undefined
              ? `partly failed: ${scrub(result.refused)}`
              : 'ok';
        if (said !== 'ok') failed++;
        io.stdout.write(`${c.name} (${c.type}): ${said}\n`);
      }
    } finally {
      await closeChannels(channels.values());
    }
    return failed === 0 ? EXIT.ok : EXIT.incomplete;
  },
});

/** What a failed outcome adds to its line. */
const OUTCOME_NOTES = {
  retryable: ' (temporary)',
  permanent: '',
  unconfirmed: ' (it may have arrived: look before sending again)',
} as const;

export default notifyTest;
