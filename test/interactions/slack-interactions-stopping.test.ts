/**
 * A click that reaches a daemon stopping (a rolling restart) or reloading: Slack was answered 200
 * already, so the person who clicked is told that nothing changed, never left with a button that
 * did nothing.
 */
import { afterEach, expect, it } from 'vitest';
import { createSlackInteractions } from '../../src/interactions/slack-interactions.js';
import { Secret } from '../../src/lib/secret.js';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { buttonOf, startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { finding, Harness } from '../notify/notify-fixture.js';

const TOKEN = 'xoxb-stopping-bot-token';
const SIGNING_SECRET = 'stopping-signing-secret-0123456789';
let slack: SlackApi;
let h: Harness;

afterEach(async () => {
  await h.close();
  await slack.close();
});

it('a click taken while the daemon stops is answered: nothing changed, try again', async () => {
  slack = await startSlackApi({ token: TOKEN });
  const config = {
    name: 'ops-app',
    type: 'slack_app',
    bot_token: TOKEN,
    channel: 'C0ALERTS',
    api_url: slack.url,
    interactions: { mode: 'http', signing_secret: SIGNING_SECRET },
  };
  h = Harness.open({ channels: [config] });
  h.cycle('runs', [finding('shop')]);
  await h.notifier.deliverDue();
  const message = slack.inChannel()[0]!;
  const interactions = createSlackInteractions({
    configs: [channelConfigSchema.parse(config)],
    channels: h.channels,
    clock: h.clock,
    logger: h.log.logger,
    store: h.store,
    remediation: undefined,
    wake: () => undefined,
  })!;
  await interactions.stop();

  const made = slack.signedClick(SIGNING_SECRET, {
    user: { id: 'U0ALICE', username: 'alice' },
    message,
    value: buttonOf(message, 'Acknowledge')!.value!,
  });
  interactions.http!.take(JSON.parse(new URLSearchParams(made.body).get('payload')!), new Secret(SIGNING_SECRET));
  expect((await made.click.answer).text).toMatch(
    /^deploy-watchdog is stopping or reloading its config: nothing changed/,
  );
  expect(h.log.text()).toContain('a Slack button click came while stopping or reloading: answered, nothing done');
  expect(h.log.text()).not.toContain(SIGNING_SECRET);
});
