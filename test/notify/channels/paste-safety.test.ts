/**
 * The "To silence" command is safe to paste: hostile label values go through the real Slack and
 * email channels to the local webhook receiver and SMTP sink, the command is taken out of what
 * arrived as a person copies it, and real shells run it with `deploy-watchdog` a stand-in that
 * records its words. It runs the stand-in once with exactly the expected words and nothing else;
 * where the command cannot be shown safely it is not shown at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import { parseMatcher } from '../../../src/alerts/matchers.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { AlertsNotification, Channel } from '../../../src/notify/channels/channel.js';
import { emailChannel, type EmailMessage } from '../../../src/notify/channels/email.js';
import { emailConfigSchema } from '../../../src/notify/channels/email-config.js';
import { slackChannel } from '../../../src/notify/channels/slack.js';
import type { SlackMessage } from '../../../src/notify/channels/slack-render.js';
import { slackConfigSchema } from '../../../src/notify/channels/slack-config.js';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { alertEvent, captureLogger } from './fixtures.js';
import {
  htmlCommand,
  pasteBench,
  PASTE_SHELLS,
  slackCommand,
  textCommand,
  type PasteBench,
} from '../../helpers/paste.js';

/** Where a command is shown: in every medium, in email only (Slack cannot), nowhere. */
type Shown = 'everywhere' | 'email only' | 'nowhere';

/** Hostile values of the `app` label; `M` stands for the marker file a value tries to create. */
const HOSTILE: readonly (readonly [name: string, shown: Shown, value: string])[] = [
  ['backticks around a command', 'email only', 's`;touch M;`v'],
  ['a command in backticks', 'email only', '`touch M`'],
  ['command substitution', 'everywhere', '$(touch M)'],
  ['a semicolon', 'everywhere', 'shop;touch M'],
  ['a pipe', 'everywhere', 'shop|touch M'],
  ['&&', 'everywhere', 'shop&&touch M'],
  ['a background &', 'everywhere', 'shop&touch M&'],
  ['a redirection', 'everywhere', 'shop>M'],
  ['a single quote breaking out', 'everywhere', "x';touch M;'"],
  ['a quote doubled', 'everywhere', "x'';touch M;''"],
  ['double quotes breaking out', 'nowhere', 'x";touch M;"'],
  ['a value in double quotes', 'nowhere', '"shop"'],
  ['a backslash', 'nowhere', 'x\\'],
  ["fish's escaped quote", 'nowhere', "x\\';touch M;'"],
  ['a newline', 'nowhere', 'x\ntouch M'],
  ['a carriage return', 'nowhere', 'x\rtouch M'],
  ['NUL', 'nowhere', 'x\u0000;touch M'],
  ['a terminal escape sequence', 'nowhere', 'x\u001b[2K'],
  ['DEL', 'nowhere', 'x\u007f'],
  ['a right-to-left override', 'nowhere', 'x\u202e;touch M'],
  ['bidi isolates', 'nowhere', '\u2066shop\u2069'],
  ['a zero-width space', 'nowhere', 'sh\u200bop'],
  ['a no-break space', 'nowhere', 'shop\u00a0x'],
  ['a Hangul filler', 'nowhere', 'shop\u3164'],
  ['a very long value', 'nowhere', 'x'.repeat(600)],
  ['a leading -', 'everywhere', '-rf'],
  ['an option of its own', 'everywhere', '--config=/etc/passwd'],
  ['a * glob (a file matches it)', 'everywhere', '*'],
  ['a ? glob', 'everywhere', 'glob?ed'],
  ['a [ ] glob', 'everywhere', '[a-z]*'],
  ['brace expansion', 'everywhere', '{a,b}'],
  ['a ~', 'everywhere', '~root'],
  ['a ~ after :', 'everywhere', 'a:~'],
  ['a regex that would match every app', 'everywhere', '~.*'],
  ['history !!', 'everywhere', '!!'],
  ['history !-1', 'everywhere', 'x!-1'],
  ['history !! after a quote', 'everywhere', "x'!!'!-1"],
  ["ANSI-C quoting $'…'", 'everywhere', "$'x'"],
  ['variables', 'everywhere', '$HOME${PATH}'],
  ['a comment', 'everywhere', 'x #touch M'],
  ['leading and trailing spaces', 'everywhere', ' shop '],
  ['two spaces', 'everywhere', 'a  b'],
  ['Slack markup and entities', 'everywhere', '<!here> &amp; &lt;b&gt; *b* _i_ ~s~ <https://x.example|y>'],
  ['HTML', 'everywhere', '</code><b>x</b>&amp;&#39;'],
  ['letters of other scripts', 'everywhere', 'café-über-日本'],
  ['an emoji', 'everywhere', '🚀shop'],
];

describe('the To silence command, pasted from real messages into real shells', () => {
  let bench: PasteBench;
  let receiver: WebhookReceiver;
  let sink: SmtpSink;
  let slack: Channel<SlackMessage>;
  let email: Channel<EmailMessage>;
  /** The daemon's config file, with a space and a quote in its name to be quoted too. */
  let configFile: string;

  beforeAll(async () => {
    bench = pasteBench();
    configFile = path.join(bench.dir, "watch dog's config.yaml");
    receiver = await startWebhookReceiver();
    sink = await startSmtpSink();
    const deps = { logger: captureLogger().logger, clock: new ManualClock(), commandConfigFile: configFile };
    slack = slackChannel.create(
      slackConfigSchema.parse({ name: 'ops-slack', type: 'slack', webhook_url: receiver.url }),
      deps,
    );
    email = emailChannel.create(
      emailConfigSchema.parse({
        name: 'ops-mail',
        type: 'email',
        smtp: { host: '127.0.0.1', port: sink.port, secure: 'none', timeout: 2000 },
        from: 'watchdog@example.com',
        to: ['ops@example.com'],
      }),
      deps,
    );
  });

  afterAll(async () => {
    await slack.close?.();
    await email.close?.();
    await receiver.close();
    await sink.close();
    bench.cleanup();
  });

  /** Sends `n` through both channels; the command as copied from Slack, the text email and the HTML email. */
  async function pasted(
    n: AlertsNotification,
  ): Promise<{ slack: string | null; text: string | null; html: string | null }> {
    const slackBefore = receiver.received.length;
    const mailBefore = sink.messages.length;
    expect(await slack.send(slack.render(n))).toEqual({ outcome: 'ok' });
    expect(await email.send(email.render(n))).toEqual({ outcome: 'ok' });
    const payload = receiver.received[slackBefore]!;
    const mail = sink.messages[mailBefore]!;
    return { slack: slackCommand(payload), text: textCommand(mail.text ?? ''), html: htmlCommand(mail.html ?? '') };
  }

  /** Runs a pasted line in every shell: one run of the stand-in with these words, and nothing else. */
  function expectRunsExactly(line: string, check: (words: string[]) => void): void {
    for (const shell of PASTE_SHELLS) {
      const run = bench.run(line, shell);
      expect(run, shell).toMatchObject({ status: 0, stdout: '', stderr: '' });
      expect(run.calls, shell).toHaveLength(1);
      check(run.calls[0]!);
      expect(fs.existsSync(bench.marker), `${shell} created the marker`).toBe(false);
    }
  }

  const one = (app: string): AlertsNotification => ({
    type: 'alerts',
    group: { check: 'failed_runs', environment_type: 'production' },
    events: [alertEvent({ labels: { check: 'failed_runs', environment_type: 'production', app } })],
    omitted: 0,
  });

  it.each(HOSTILE)('%s: shown %s', async (_name, shown, template) => {
    const value = template.replace(/M/g, bench.marker);
    const commands = await pasted(one(value));
    expect(commands.slack !== null, 'in Slack').toBe(shown === 'everywhere');
    expect(commands.text !== null, 'in email').toBe(shown !== 'nowhere');
    // Every medium that shows the command shows the same line, character for character.
    const lines = new Set([commands.slack, commands.text, commands.html].filter((l) => l !== null));
    expect(commands.html).toBe(commands.text);
    expect(lines.size).toBe(shown === 'nowhere' ? 0 : 1);

    for (const line of lines) {
      expectRunsExactly(line, (words) => {
        expect(words).toEqual([
          'silence',
          '--config',
          configFile,
          '--match',
          'check=failed_runs',
          '--match',
          words[6],
          '--for',
          '2h',
          '--reason',
          '…',
        ]);
        // The matcher `silence` reads back is exactly app = the hostile value.
        expect(parseMatcher(words[6]!)).toEqual({ name: 'app', op: '=', value });
      });
    }
  });

  it('several events: the group labels, hostile ones too, are matched as they are', async () => {
    const env = 'prod$(touch M)`x`'.replace(/M/g, bench.marker);
    const events: AlertEvent[] = [1, 2].map((id) =>
      alertEvent({ id, labels: { check: 'failed_runs', environment_type: env, app: `app-${id}` } }),
    );
    const commands = await pasted({
      type: 'alerts',
      group: { check: 'failed_runs', environment_type: env },
      events,
      omitted: 0,
    });
    expect(commands.slack).toBeNull();
    expect(commands.text).toBe(commands.html);
    expectRunsExactly(commands.text!, (words) => {
      expect(words).toEqual([
        'silence',
        '--config',
        configFile,
        '--match',
        'check=failed_runs',
        '--match',
        words[6],
        '--for',
        '2h',
        '--reason',
        '…',
      ]);
      expect(parseMatcher(words[6]!)).toEqual({ name: 'environment_type', op: '=', value: env });
    });
  });
});
