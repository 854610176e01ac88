/**
 * The Socket Mode receiver against the fake Slack's WebSocket: an envelope is acknowledged at once
 * and its interaction handed on; when Slack asks the connection to go (as it does every few hours)
 * it connects again and clicks still arrive; one closed as soon as it opened is connected again
 * after a backoff, not at once; a refused app token is said once, as an error naming what to fix,
 * without the token.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { SocketReceiver } from '../../src/interactions/slack-socket-receiver.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { LogCapture } from '../notify/notify-fixture.js';

const APP_TOKEN = 'xapp-1-receiver-SECRET-token';
let slack: SlackApi;
let receiver: SocketReceiver | undefined;

afterEach(async () => {
  await receiver?.stop();
  receiver = undefined;
  await slack.close();
});

function start(token: string) {
  const log = new LogCapture();
  const payloads: unknown[] = [];
  const clock = new ManualClock();
  receiver = new SocketReceiver({
    appToken: new Secret(token),
    apiUrl: slack.url,
    channels: ['ops-app'],
    onPayload: (p) => payloads.push(p),
    clock,
    log: log.logger,
    random: () => 1,
  });
  receiver.start();
  return { log, payloads, clock };
}

const click = {
  user: { id: 'U0ALICE' },
  message: { channel: 'C0ALERTS', ts: '1.000100' },
  value: 'acknowledge:1a2b3c4d',
};

describe('SocketReceiver', () => {
  it('acknowledges an envelope, hands on its interaction, and connects again when Slack asks it to go', async () => {
    slack = await startSlackApi({ token: 'xoxb-bot', appToken: APP_TOKEN });
    const { log, payloads, clock } = start(APP_TOKEN);
    await slack.connected();
    await slack.clickOverSocket(click);
    expect(slack.acks).toHaveLength(1);
    await vi.waitFor(() => expect(payloads).toHaveLength(1));
    expect(payloads[0]).toMatchObject({ type: 'block_actions', user: { id: 'U0ALICE' } });

    // Hours later, as Slack recycles a connection: again at once.
    clock.advance(3 * 3600_000);
    slack.disconnectSockets();
    await slack.connected(2);
    await vi.waitFor(() => expect(log.text()).toContain('Slack closed the Socket Mode connection; connecting again'));
    await slack.clickOverSocket(click);
    await vi.waitFor(() => expect(payloads).toHaveLength(2));
    expect(slack.callsOf('apps.connections.open').every((c) => c.authorized)).toBe(true);
    expect(log.text()).not.toContain('SECRET');
  });

  it('a connection closed as soon as it opened is connected again after a backoff, growing while it goes on', async () => {
    slack = await startSlackApi({ token: 'xoxb-bot', appToken: APP_TOKEN });
    const { log, clock } = start(APP_TOKEN);
    for (const [n, waitMs] of [
      [1, 1_000],
      [2, 2_000],
      [3, 4_000],
    ] as const) {
      await slack.connected(n);
      slack.disconnectSockets();
      // Asleep for the backoff: no new connection until the clock moves past it.
      await vi.waitFor(() => expect(clock.nextWakeAt()).toBe(clock.now() + waitMs));
      expect(slack.connections).toBe(n);
      clock.advance(waitMs);
    }
    await slack.connected(4);
    expect(log.text()).toContain('"retryInMs":4000');
  });

  it('says a refused app token once, as an error naming what to fix, and never logs it', async () => {
    slack = await startSlackApi({ token: 'xoxb-bot', appToken: 'xapp-1-the-right-one' });
    const { log } = start(APP_TOKEN);
    await vi.waitFor(() => expect(log.text()).toContain('Slack refused the app-level token for Socket Mode'));
    expect(log.text()).toContain('check interactions.app_token');
    expect(slack.connections).toBe(0);
    expect(log.text()).not.toContain('SECRET');
  });
});
