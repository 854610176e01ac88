import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { Secret } from '../../../src/lib/secret.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { buildChannels, closeChannels } from '../../../src/notify/build-channels.js';
import { CHANNEL_KINDS, channelConfigSchema } from '../../../src/notify/channels/registry.js';
import type { AlertmanagerMessage } from '../../../src/notify/channels/webhook.js';
import { alertEvent, alerts } from './fixtures.js';

const HOOK = 'https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX';

describe('channel config schemas', () => {
  it('lists every kind once, under its own type', () => {
    expect(Object.keys(CHANNEL_KINDS).sort()).toEqual([
      'discord',
      'email',
      'log',
      'opsgenie',
      'pagerduty',
      'slack',
      'slack_app',
      'teams',
      'webhook',
    ]);
    for (const [type, kind] of Object.entries(CHANNEL_KINDS))
      expect((kind.configSchema as unknown as z.ZodObject).shape.type).toMatchObject({ value: type });
  });

  it('parses a slack channel, the webhook URL becoming a Secret', () => {
    const parsed = channelConfigSchema.parse({
      name: 'ops-slack',
      type: 'slack',
      webhook_url: HOOK,
      mention: { critical: '<!here>' },
    });
    expect(parsed.type === 'slack' && parsed.webhook_url).toBeInstanceOf(Secret);
    expect(parsed.type === 'slack' && parsed.webhook_url.reveal()).toBe(HOOK);
    expect(JSON.stringify(parsed)).not.toContain('XXXXsecretXXXX');
    expect(parsed).toMatchObject({ timeout: 10_000, mention: { critical: '<!here>' } });
  });

  it('parses a webhook channel, its URL, header values, token and password becoming Secrets', () => {
    const parsed = channelConfigSchema.parse({
      name: 'oncall',
      type: 'webhook',
      url: 'https://oncall.example.com/hooks/XXXXsecretXXXX',
      headers: { 'X-Api-Key': 'XXXXkeyXXXX' },
      bearer_token: 'XXXXtokenXXXX',
    });
    expect(parsed.type === 'webhook' && [parsed.url, parsed.headers?.['X-Api-Key'], parsed.bearer_token]).toEqual([
      expect.any(Secret),
      expect.any(Secret),
      expect.any(Secret),
    ]);
    expect(JSON.stringify(parsed)).not.toMatch(/XXXX(secret|key|token)XXXX/);
    expect(parsed).toMatchObject({ max_alerts: 0, timeout: 10_000 });
    expect(parsed).not.toHaveProperty('external_url');
  });

  it("parses a slack_app channel: the bot token a Secret, Slack's API by default, a new alert and an escalation broadcast", () => {
    const parsed = channelConfigSchema.parse({
      name: 'ops-app',
      type: 'slack_app',
      bot_token: 'xoxb-XXXXsecretXXXX',
      channel: 'C0123ABCD',
    });
    expect(parsed.type === 'slack_app' && parsed.bot_token).toBeInstanceOf(Secret);
    expect(JSON.stringify(parsed)).not.toContain('XXXXsecretXXXX');
    expect(parsed).toMatchObject({
      api_url: 'https://slack.com/api/',
      broadcast: ['firing', 'escalated'],
      timeout: 10_000,
    });
  });

  it('fills email defaults', () => {
    const parsed = channelConfigSchema.parse({
      name: 'ops-mail',
      type: 'email',
      smtp: { host: 'smtp.example.com', auth: { user: 'u', pass: 'p@ss' } },
      from: 'watchdog@example.com',
      to: ['ops@example.com'],
    });
    expect(parsed).toMatchObject({
      smtp: { port: 587, secure: 'starttls', timeout: 15_000, tls_reject_unauthorized: true },
      subject_prefix: '[deploy-watchdog]',
    });
    expect(JSON.stringify(parsed)).not.toContain('p@ss');
  });

  it.each([
    [
      'a webhook that is not http(s)',
      { name: 'a', type: 'slack', webhook_url: 'ftp://hooks.example.com/XXXXsecretXXXX' },
      'webhook_url',
      'must be an http(s) URL',
    ],
    [
      'a webhook that is not a URL',
      { name: 'a', type: 'slack', webhook_url: 'XXXXsecretXXXX' },
      'webhook_url',
      'must be an http(s) URL',
    ],
    ['an empty webhook', { name: 'a', type: 'slack', webhook_url: '' }, 'webhook_url', 'must not be empty'],
    ['a missing webhook', { name: 'a', type: 'slack' }, 'webhook_url', 'is required'],
    ['an unknown slack key', { name: 'a', type: 'slack', webhook_url: HOOK, channel: '#ops' }, '', 'channel'],
    [
      'a per-channel max_items (the one cap is notify.max_items_per_message)',
      { name: 'a', type: 'slack', webhook_url: HOOK, max_items: 5 },
      '',
      'max_items',
    ],
    [
      'no recipients',
      { name: 'm', type: 'email', smtp: { host: 'h' }, from: 'w@example.com', to: [] },
      'to',
      'at least one recipient',
    ],
    [
      'a bad recipient',
      { name: 'm', type: 'email', smtp: { host: 'h' }, from: 'w@example.com', to: ['ops'] },
      'to.0',
      'must be an email address',
    ],
    [
      'a bad secure mode',
      { name: 'm', type: 'email', smtp: { host: 'h', secure: 'ssl' }, from: 'w@example.com', to: ['o@example.com'] },
      'smtp.secure',
      '',
    ],
    [
      'a prefix with a line break',
      {
        name: 'm',
        type: 'email',
        smtp: { host: 'h' },
        from: 'w@example.com',
        to: ['o@example.com'],
        subject_prefix: 'x\r\nBcc: y',
      },
      'subject_prefix',
      'control characters',
    ],
    [
      "a PagerDuty webhook's signing secret too short to be one",
      { name: 'p', type: 'pagerduty', routing_key: 'a'.repeat(32), webhook: { signing_secret: 'XXXXsecretXXXX' } },
      'webhook.signing_secret',
      'value not shown',
    ],
    [
      "a PagerDuty webhook's REST API key with a space",
      {
        name: 'p',
        type: 'pagerduty',
        routing_key: 'a'.repeat(32),
        webhook: { signing_secret: 'XXXXsecretXXXX-0123', api_key: 'XXXXsecretXXXX XXXXsecretXXXX' },
      },
      'webhook.api_key',
      'value not shown',
    ],
    [
      "a PagerDuty webhook's REST API root in clear text off loopback",
      {
        name: 'p',
        type: 'pagerduty',
        routing_key: 'a'.repeat(32),
        webhook: { signing_secret: 'XXXXsecretXXXX-0123', api_url: 'http://pd.example.com' },
      },
      'webhook.api_url',
      'must be https',
    ],
    [
      "an Opsgenie webhook's token with a space",
      { name: 'o', type: 'opsgenie', api_key: 'k'.repeat(36), webhook: { token: 'XXXXsecretXXXX XXXXsecretXXXX' } },
      'webhook.token',
      'value not shown',
    ],
    [
      'an unknown key in a webhook section',
      { name: 'o', type: 'opsgenie', api_key: 'k'.repeat(36), webhook: { token: 'XXXXsecretXXXX-0123', hmac: 1 } },
      'webhook',
      'hmac',
    ],
    [
      'a webhook URL that is not http(s)',
      { name: 'w', type: 'webhook', url: 'ftp://hooks.example.com/XXXXsecretXXXX' },
      'url',
      'must be an http(s) URL',
    ],
    [
      'a webhook URL with a user and password',
      { name: 'w', type: 'webhook', url: 'https://u:XXXXsecretXXXX@hooks.example.com/' },
      'url',
      'use basic_auth',
    ],
    [
      'a bearer token and basic auth',
      {
        name: 'w',
        type: 'webhook',
        url: HOOK,
        bearer_token: 'XXXXsecretXXXX',
        basic_auth: { username: 'u', password: 'XXXXsecretXXXX' },
      },
      'bearer_token',
      'not both',
    ],
    [
      'a header the request sets itself',
      { name: 'w', type: 'webhook', url: HOOK, headers: { 'Content-Type': 'text/plain' } },
      'headers.Content-Type',
      'set by the request itself',
    ],
    [
      'an Authorization header beside a bearer token',
      {
        name: 'w',
        type: 'webhook',
        url: HOOK,
        bearer_token: 'XXXXsecretXXXX',
        headers: { Authorization: 'XXXXsecretXXXX' },
      },
      'headers.Authorization',
      'give one of them',
    ],
    [
      'a header given twice',
      { name: 'w', type: 'webhook', url: HOOK, headers: { 'X-Key': 'XXXXsecretXXXX', 'x-key': 'XXXXsecretXXXX' } },
      'headers.x-key',
      'given twice',
    ],
    [
      'a header value with a line break',
      { name: 'w', type: 'webhook', url: HOOK, headers: { 'X-Key': 'XXXXsecretXXXX\r\nX-Evil: 1' } },
      'headers.X-Key',
      'control characters',
    ],
    [
      'a header name with a space',
      { name: 'w', type: 'webhook', url: HOOK, headers: { 'X Key': 'XXXXsecretXXXX' } },
      'headers.X Key',
      'HTTP header name',
    ],
    ['a negative max_alerts', { name: 'w', type: 'webhook', url: HOOK, max_alerts: -1 }, 'max_alerts', ''],
    [
      'an external_url that is not http(s)',
      { name: 'w', type: 'webhook', url: HOOK, external_url: 'javascript:alert(1)' },
      'external_url',
      'must be an http(s) URL',
    ],
    [
      'a channel name where the app needs its ID',
      { name: 'a', type: 'slack_app', bot_token: 'xoxb-XXXXsecretXXXX', channel: '#ops' },
      'channel',
      'must be a channel ID like C0123ABCD',
    ],
    ['a missing bot token', { name: 'a', type: 'slack_app', channel: 'C0123ABCD' }, 'bot_token', ''],
    [
      'an event kind that is not one',
      { name: 'a', type: 'slack_app', bot_token: 'xoxb-XXXXsecretXXXX', channel: 'C0123ABCD', broadcast: ['fired'] },
      'broadcast.0',
      '',
    ],
    [
      'a Web API root in plain HTTP off this machine, where the bot token would cross in clear text',
      {
        name: 'a',
        type: 'slack_app',
        bot_token: 'xoxb-XXXXsecretXXXX',
        channel: 'C0123ABCD',
        api_url: 'http://slack-proxy.example.com/api/',
      },
      'api_url',
      'must be https (http only on loopback',
    ],
    [
      'a bot token where Socket Mode needs the app-level token',
      {
        name: 'a',
        type: 'slack_app',
        bot_token: 'xoxb-XXXXsecretXXXX',
        channel: 'C0123ABCD',
        interactions: { mode: 'socket', app_token: 'xoxb-XXXXsecretXXXX' },
      },
      'interactions.app_token',
      'must be an app-level token (xapp-…)',
    ],
    [
      'a token where the signing secret goes',
      {
        name: 'a',
        type: 'slack_app',
        bot_token: 'xoxb-XXXXsecretXXXX',
        channel: 'C0123ABCD',
        interactions: { mode: 'http', signing_secret: 'xapp-XXXXsecretXXXX' },
      },
      'interactions.signing_secret',
      'must be the signing secret',
    ],
    [
      'an interactions mode that is not one',
      {
        name: 'a',
        type: 'slack_app',
        bot_token: 'xoxb-XXXXsecretXXXX',
        channel: 'C0123ABCD',
        interactions: { mode: 'events', app_token: 'xapp-XXXXsecretXXXX' },
      },
      'interactions.mode',
      'mode must be socket or http',
    ],
    [
      'a user name where an ID is needed',
      {
        name: 'a',
        type: 'slack_app',
        bot_token: 'xoxb-XXXXsecretXXXX',
        channel: 'C0123ABCD',
        interactions: { mode: 'socket', app_token: 'xapp-XXXXsecretXXXX', allow: { silence: { users: ['@alice'] } } },
      },
      'interactions.allow.silence.users.0',
      'must be a Slack user ID like U0123ABCD',
    ],
    [
      'a user group handle where an ID is needed',
      {
        name: 'a',
        type: 'slack_app',
        bot_token: 'xoxb-XXXXsecretXXXX',
        channel: 'C0123ABCD',
        interactions: {
          mode: 'socket',
          app_token: 'xapp-XXXXsecretXXXX',
          allow: { remediate: { usergroups: ['oncall'] } },
        },
      },
      'interactions.allow.remediate.usergroups.0',
      'must be a Slack user group ID like S0123ABCD',
    ],
    ['an unknown type', { name: 'p', type: 'victorops' }, 'type', ''],
  ])('refuses %s, naming %s', (_name, input, path, message) => {
    const result = channelConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    const issues = result.error?.issues ?? [];
    const issue = issues.find((i) => i.path.join('.') === path);
    expect(issue, JSON.stringify(issues)).toBeDefined();
    expect(issue?.message).toContain(message);
    // The webhook URL is a secret even when wrong: no error repeats it.
    expect(JSON.stringify(issues)).not.toContain('XXXXsecretXXXX');
  });
});

describe("a Slack app channel's interactions", () => {
  it('default to: anyone may acknowledge, nobody may silence or remediate, user groups asked again after 5m', () => {
    const parsed = channelConfigSchema.parse({
      name: 'a',
      type: 'slack_app',
      bot_token: 'xoxb-XXXXsecretXXXX',
      channel: 'C0123ABCD',
      interactions: { mode: 'socket', app_token: 'xapp-XXXXsecretXXXX' },
    });
    expect(parsed).toMatchObject({
      interactions: {
        mode: 'socket',
        allow: { acknowledge: 'anyone', silence: 'nobody', remediate: 'nobody' },
        usergroup_cache: 300_000,
      },
    });
    expect(JSON.stringify(parsed)).not.toContain('XXXXsecretXXXX');
  });
});

describe('buildChannels', () => {
  it('builds each configured channel by its kind, keyed by name, in config order', async () => {
    const configs = [
      { name: 's', type: 'slack', webhook_url: HOOK },
      { name: 'm', type: 'email', smtp: { host: 'smtp.example.com' }, from: 'w@example.com', to: ['o@example.com'] },
      { name: 'l', type: 'log' },
      { name: 'w', type: 'webhook', url: HOOK },
    ].map((c) => channelConfigSchema.parse(c));
    const channels = buildChannels(configs, { logger: silentLogger, clock: new ManualClock() });
    try {
      expect([...channels].map(([name, c]) => [name, c.kind])).toEqual([
        ['s', 'slack'],
        ['m', 'email'],
        ['l', 'log'],
        ['w', 'webhook'],
      ]);
    } finally {
      await closeChannels(channels.values());
    }
  });

  it('gives the webhook channel server.console.public_url as its externalURL unless it sets one', async () => {
    const configs = [
      { name: 'w', type: 'webhook', url: HOOK },
      { name: 'own', type: 'webhook', url: HOOK, external_url: 'https://own.example.com' },
    ].map((c) => channelConfigSchema.parse(c));
    const channels = buildChannels(configs, {
      logger: silentLogger,
      clock: new ManualClock(),
      consoleUrl: 'https://watchdog.example.com',
    });
    try {
      const external = (name: string) =>
        (channels.get(name)!.render(alerts([alertEvent()])) as AlertmanagerMessage).externalURL;
      expect([external('w'), external('own')]).toEqual(['https://watchdog.example.com', 'https://own.example.com']);
    } finally {
      await closeChannels(channels.values());
    }
  });
});
