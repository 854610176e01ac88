/**
 * The answer to the person who clicked (an ephemeral message at the click's response URL), in the
 * cases a daemon test does not reach: Slack was answered 200 already, so the person is told what
 * came of the click, never left with a button that seemed to do nothing. A click that reaches a
 * daemon stopping (a rolling restart) or reloading is told that nothing changed; one whose living
 * message cannot be updated yet (Slack slow) is told at once what was done.
 */
import { afterEach, expect, it } from 'vitest';
import { createSlackInteractions } from '../../src/interactions/slack-interactions.js';
import { Secret } from '../../src/lib/secret.js';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { buttonOf, startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { finding, Harness } from '../notify/notify-fixture.js';

const TOKEN = 'xoxb-answers-bot-token';
const SIGNING_SECRET = 'answers-signing-secret-0123456789';
let slack: SlackApi;
let h: Harness;

afterEach(async () => {
  await h.close();
  await slack.close();
});

/** A living message of one alert on the fake Slack, the interactions that take its clicks, and a click on its Acknowledge. */
async function posted() {
  slack = await startSlackApi({ token: TOKEN });
  const config = {
    name: 'ops-app',
    type: 'slack_app',
    bot_token: TOKEN,
    channel: 'C0ALERTS',
    api_url: slack.url,
    // A call held by Slack lasts this long: far longer than any answer may wait.
    timeout: 60_000,
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
  const clickAcknowledge = () => {
    const made = slack.signedClick(SIGNING_SECRET, {
      user: { id: 'U0ALICE', username: 'alice' },
      message,
      value: buttonOf(message, 'Acknowledge')!.value!,
    });
    interactions.http!.take(JSON.parse(new URLSearchParams(made.body).get('payload')!), new Secret(SIGNING_SECRET));
    return made.click.answer;
  };
  return { interactions, clickAcknowledge };
}

it('a click taken while the daemon stops is answered: nothing changed, try again', async () => {
  const { interactions, clickAcknowledge } = await posted();
  await interactions.stop();
  expect((await clickAcknowledge()).text).toMatch(
    /^deploy-watchdog is stopping or reloading its config: nothing changed/,
  );
  expect(h.log.text()).toContain('a Slack button click came while stopping or reloading: answered, nothing done');
  expect(h.log.text()).not.toContain(SIGNING_SECRET);
});

it('a click is answered at once, while Slack holds the update of its living message', async () => {
  const { clickAcknowledge } = await posted();
  slack.holdNext('chat.update', { keep: false });
  expect((await clickAcknowledge()).text).toMatch(/^Acknowledged by alice \(U0ALICE\)/);
});
