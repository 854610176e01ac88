import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, writeConfig as writeConfigFile, type CliResult } from '../helpers/cli-harness.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startSlackApi } from '../helpers/slack-api.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startAlertmanagerReceiver } from './alertmanager-receiver.js';
import { payloadText } from './notify-fixture.js';

let slack: WebhookReceiver;
let revoked: WebhookReceiver;
let sink: SmtpSink;
let dir: string;

beforeEach(async () => {
  slack = await startWebhookReceiver();
  revoked = await startWebhookReceiver();
  revoked.setMode('notFound');
  sink = await startSmtpSink();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-notify-test-'));
});

afterEach(async () => {
  await slack.close();
  await revoked.close();
  await sink.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A config with these notify.channels entries (flow-style YAML, one a line). */
function writeConfig(channels: string[]): string {
  return writeConfigFile(dir, [
    'api: { base_url: "http://127.0.0.1:1", token: "${DMS_API_TOKEN}" }',
    `state: { path: ${JSON.stringify(path.join(dir, 'state.db'))} }`,
    'notify:',
    '  delivery: { timeout: 5s }',
    channels.length === 0 ? '  channels: []' : '  channels:',
    ...channels.map((c) => `    - ${c}`),
  ]);
}

/** Runs one command line with the receivers' URLs in the environment. */
function run(argv: string[]): Promise<CliResult> {
  return runCli(argv, { env: { DMS_API_TOKEN: 'tok', SLACK_URL: slack.url, REVOKED_URL: revoked.url } });
}

const SLACK = '{ name: ops-slack, type: slack, webhook_url: "${SLACK_URL}" }';
const REVOKED = '{ name: old-slack, type: slack, webhook_url: "${REVOKED_URL}" }';
const mail = () =>
  `{ name: ops-mail, type: email, smtp: { host: 127.0.0.1, port: ${sink.port}, secure: none }, from: dw@example.com, to: [ops@example.com] }`;

describe('notify-test', () => {
  it('sends a test message to every channel and exits 0 when all took it', async () => {
    const file = writeConfig([SLACK, mail()]);
    const r = await run(['notify-test', '--config', file]);
    expect(r).toMatchObject({ code: 0, stdout: 'ops-slack (slack): ok\nops-mail (email): ok\n' });
    expect(payloadText(slack.received[0])).toContain('deploy-watchdog test message');
    expect(sink.messages[0]?.subject).toContain('deploy-watchdog test message');
  });

  it('exits 1 and names the reason, never the URL, when a channel refuses', async () => {
    const file = writeConfig([SLACK, REVOKED]);
    const r = await run(['notify-test', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('ops-slack (slack): ok\nold-slack (slack): failed: rejected (HTTP 404): no_service\n');
    expect(r.stdout + r.stderr).not.toContain(new URL(revoked.url).pathname);
  });

  it('exits 1 and says "partly failed" when the SMTP server refuses one recipient and takes the other', async () => {
    sink.setMode('refuse-some-rcpt');
    try {
      const file = writeConfig([
        `{ name: ops-mail, type: email, smtp: { host: 127.0.0.1, port: ${sink.port}, secure: none }, from: dw@example.com, to: [ops@example.com, refused@example.com] }`,
      ]);
      const r = await run(['notify-test', '--config', file]);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        /^ops-mail \(email\): partly failed: the SMTP server refused refused@example\.com \(550 5\.1\.1 Mailbox unavailable\); they did not get it\n$/,
      );
      expect(sink.messages.at(-1)?.to).toEqual(['ops@example.com']);
    } finally {
      sink.setMode('ok');
    }
  });

  it('tests a webhook channel with a payload an Alertmanager receiver takes: one alert already over', async () => {
    const hook = await startAlertmanagerReceiver();
    try {
      const file = writeConfig(['{ name: oncall, type: webhook, url: "${HOOK_URL}" }']);
      const r = await runCli(['notify-test', '--config', file], { env: { DMS_API_TOKEN: 'tok', HOOK_URL: hook.url } });
      expect(r).toMatchObject({ code: 0, stdout: 'oncall (webhook): ok\n' });
      expect(hook.invalid).toEqual([]);
      expect(hook.received[0]?.payload).toMatchObject({
        status: 'resolved',
        groupLabels: { alertname: 'notice', topic: 'test' },
        alerts: [{ status: 'resolved', annotations: { summary: 'deploy-watchdog test message' } }],
      });
    } finally {
      await hook.close();
    }
  });

  it('a Slack app channel: the test message posted alone (nothing kept); a refused token named, never shown', async () => {
    const api = await startSlackApi({ token: 'xoxb-good-SECRET' });
    try {
      const app = (name: string, token: string) =>
        `{ name: ${name}, type: slack_app, bot_token: ${token}, channel: C0ALERTS, api_url: "${api.url}" }`;
      const file = writeConfig([app('ops-app', 'xoxb-good-SECRET'), app('old-app', 'xoxb-revoked-SECRET')]);
      const r = await run(['notify-test', '--config', file]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe(
        'ops-app (slack_app): ok\n' +
          "old-app (slack_app): failed: Slack refused the bot token (invalid_auth): check bot_token of old-app (the app's xoxb- token)\n",
      );
      expect(api.inChannel()).toMatchObject([{ text: expect.stringContaining('deploy-watchdog test message') }]);
      expect(api.inChannel()[0]?.metadata).toBeUndefined();
      expect(r.stdout + r.stderr).not.toContain('SECRET');
      expect(fs.existsSync(path.join(dir, 'state.db'))).toBe(false);
    } finally {
      await api.close();
    }
  });

  it('--channel NAME tests only that channel', async () => {
    const file = writeConfig([SLACK, REVOKED]);
    const r = await run(['notify-test', '--config', file, '--channel', 'ops-slack']);
    expect(r).toMatchObject({ code: 0, stdout: 'ops-slack (slack): ok\n' });
    expect(revoked.requests).toBe(0);
  });

  it.each([
    [
      'no config file',
      () => ['notify-test'],
      /no configuration file: give --config FILE, set \$DEPLOY_WATCHDOG_CONFIG, or create \/dev\/null\//,
    ],
    ['an unknown option', () => ['notify-test', '--bogus'], /bogus/],
    [
      'an unknown channel',
      () => ['notify-test', '--config', writeConfig([SLACK]), '--channel', 'nope'],
      /no channel named "nope".*known: ops-slack/,
    ],
    ['no channels', () => ['notify-test', '--config', writeConfig([])], /notify\.channels is empty/],
    [
      'a bad config',
      () => ['notify-test', '--config', writeConfig(['{ name: x, type: pigeon }'])],
      /notify\.channels\[0\]/,
    ],
  ])('exits 2 for %s', async (_name, argv, message) => {
    const r = await run(argv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(slack.requests).toBe(0);
  });
});
