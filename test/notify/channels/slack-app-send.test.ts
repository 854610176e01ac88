/**
 * The Slack app channel's sends against the fake Slack Web API, one answer at a time: what each
 * failure that is not Slack's error word means for the outbox (a server error, a rate limit with
 * and without Retry-After, no answer in time, nobody listening, an answer without a ts), the
 * client's own warnings in our log, and the token in none of it.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { SendResult } from '../../../src/notify/channels/channel.js';
import { slackAppChannel, type SlackAppChannel } from '../../../src/notify/channels/slack-app.js';
import { slackAppConfigSchema } from '../../../src/notify/channels/slack-app-config.js';
import { startSlackApi, type SlackApi } from '../../helpers/slack-api.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

const TOKEN = 'xoxb-send-test-SECRET-token';

let slack: SlackApi;
let channel: SlackAppChannel;
let refused: SlackAppChannel;
const { logger, lines } = captureLogger();
const results: SendResult[] = [];

/** A port nobody listens on: a server that was listening there is closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function create(apiUrl: string): SlackAppChannel {
  const config = slackAppConfigSchema.parse({
    name: 'ops-app',
    type: 'slack_app',
    bot_token: TOKEN,
    channel: 'C0ALERTS',
    api_url: apiUrl,
    // Short, so the "no answer" case ends soon, yet over a second, so a loaded machine never makes
    // an answered request time out; no assertion depends on how long it took.
    timeout: 2000,
  });
  // No state (as in notify-test): every message stands alone.
  return slackAppChannel.create(config, { logger, clock: new ManualClock() });
}

beforeAll(async () => {
  slack = await startSlackApi({ token: TOKEN });
  channel = create(slack.url);
  refused = create(`http://127.0.0.1:${await closedPort()}/api/`);
});

afterAll(async () => {
  await channel.close?.();
  await refused.close?.();
  await slack.close();
  for (const text of [...results.map((r) => JSON.stringify(r)), ...lines]) expect(text).not.toContain(TOKEN);
  expect(results.length).toBeGreaterThan(0);
});

async function send(over: SlackAppChannel = channel): Promise<SendResult> {
  const result = await over.send(over.render(alerts([alertEvent()])));
  results.push(result);
  return result;
}

describe('slack_app channel, answer by answer', () => {
  it('without a state, an alert is posted as a message of its own, form-encoded with the token in its header', async () => {
    expect(await send()).toEqual({ outcome: 'ok' });
    expect(slack.inChannel().at(-1)).toMatchObject({ text: expect.stringContaining('1 failed run · shop') });
    expect(slack.calls.at(-1)).toMatchObject({ method: 'chat.postMessage', encoding: 'form', authorized: true });
    expect(slack.calls.at(-1)?.args).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false' });
  });

  it.each([
    {
      what: 'a server error',
      status: 500,
      body: 'upstream down',
      headers: {} as Record<string, string>,
      result: { outcome: 'retryable', reason: 'server error (HTTP 500): upstream down' },
    },
    {
      what: 'a rate limit with Retry-After',
      status: 429,
      body: '{"ok":false,"error":"ratelimited"}',
      headers: { 'retry-after': '7' },
      result: { outcome: 'retryable', reason: 'rate limited (HTTP 429): ratelimited', retryAfterMs: 7_000 },
    },
    {
      what: 'a rate limit without a usable Retry-After',
      status: 429,
      body: '{"ok":false,"error":"ratelimited"}',
      headers: {} as Record<string, string>,
      result: { outcome: 'retryable', reason: 'rate limited (HTTP 429): ratelimited' },
    },
    {
      what: 'an answer without a ts (the post may have arrived: retried, and the intent finds it)',
      status: 200,
      body: '{"ok":true}',
      headers: {} as Record<string, string>,
      result: { outcome: 'retryable', reason: "Slack's answer to chat.postMessage named no channel and ts" },
    },
  ])('$what', async ({ status, body, headers, result }) => {
    slack.answerNext('chat.postMessage', status, body, headers);
    expect(await send()).toEqual(result);
  });

  it('no answer within its timeout: retryable, saying how long it waited', async () => {
    slack.holdNext('chat.postMessage', { keep: false });
    expect(await send()).toEqual({ outcome: 'retryable', reason: 'timed out after 2000 ms' });
  });

  it('nobody listening: retryable, naming the network error', async () => {
    expect(await send(refused)).toEqual({ outcome: 'retryable', reason: 'network error (ECONNREFUSED)' });
  });

  it("the client's own warnings reach our log at warn, its debug lines (whole requests) do not", async () => {
    slack.answerNext(
      'chat.postMessage',
      200,
      JSON.stringify({
        ok: true,
        channel: 'C0ALERTS',
        ts: '1.000001',
        response_metadata: { warnings: ['superfluous_charset'] },
      }),
    );
    expect(await send()).toEqual({ outcome: 'ok' });
    const warning = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'superfluous_charset');
    expect(warning).toMatchObject({ level: 40, library: '@slack/web-api', channel: 'ops-app' });
    expect(lines.join('')).not.toContain('http request body');
  });

  it('verify: auth.test, ok for a good token', async () => {
    expect(await channel.verify!()).toEqual({ outcome: 'ok' });
    expect(slack.callsOf('auth.test').at(-1)).toMatchObject({ authorized: true });
  });
});
