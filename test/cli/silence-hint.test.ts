/**
 * The "To silence" line works as printed: `check` runs against the simulator and notifies a local
 * Slack receiver and SMTP sink; the line is taken from both messages, split into words by a real
 * shell, and those words run as the real `silence` command in a person's environment. The silence
 * is created and mutes the alert. The line names `--config` unless the default resolution finds
 * the daemon's file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_FILE_ENV } from '../../src/cli/config-file.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { NO_DEFAULT_CONFIG, runCli, writeConfig } from '../helpers/cli-harness.js';
import { pasteBench, slackCommand, textCommand, htmlCommand, type PasteBench } from '../helpers/paste.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let sim: RunningSimulator;
let receiver: WebhookReceiver;
let sink: SmtpSink;
let bench: PasteBench;
let dir: string;
/** The daemon's config file, in a folder whose name needs quoting. */
let configFile: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 12, seed: 3 });
  receiver = await startWebhookReceiver();
  sink = await startSmtpSink();
  bench = pasteBench();
});
afterAll(async () => {
  await receiver.close();
  await sink.close();
  await sim.close();
  bench.cleanup();
});
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-hint-'));
  const folder = path.join(dir, "ops' configs");
  fs.mkdirSync(folder);
  configFile = writeConfig(folder, [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 1000',
    '  max_retries: 0',
    'state: { path: ./state.db }',
    'notify:',
    '  channels:',
    `    - { name: ops-slack, type: slack, webhook_url: "${receiver.url}" }`,
    `    - { name: ops-mail, type: email, smtp: { host: 127.0.0.1, port: ${sink.port}, secure: none }, from: w@example.com, to: [ops@example.com] }`,
    '  routes: [{ channels: [ops-slack, ops-mail] }]',
    'log: { level: warn }',
  ]);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Where the daemon found its config, and the environment of the person who pastes the line. */
interface Setup {
  /** `check`'s own --config, if any. */
  option: string[];
  daemonEnv: NodeJS.ProcessEnv;
  personEnv: NodeJS.ProcessEnv;
  /** The default config file of both environments (the same host or container). */
  defaultConfigFile: () => string;
  /** Whether the line names the config. */
  namesConfig: boolean;
}

const TOKEN = () => ({ DMS_API_TOKEN: sim.adminToken });

describe('the To silence line of a message from check', () => {
  it.each<[string, Setup]>([
    [
      'the config elsewhere than the default: the line names it',
      {
        option: ['--config', '<config>'],
        daemonEnv: {},
        personEnv: {},
        defaultConfigFile: () => NO_DEFAULT_CONFIG,
        namesConfig: true,
      },
    ],
    [
      'the config at the default location: the line is shorter and still works',
      { option: [], daemonEnv: {}, personEnv: {}, defaultConfigFile: () => configFile, namesConfig: false },
    ],
    [
      // The variable may be the daemon's only (a systemd unit): the person's shell does not have it.
      'the config found by $DEPLOY_WATCHDOG_CONFIG: the line names it',
      {
        option: [],
        daemonEnv: { [CONFIG_FILE_ENV]: '<config>' },
        personEnv: {},
        defaultConfigFile: () => NO_DEFAULT_CONFIG,
        namesConfig: true,
      },
    ],
  ])('%s', async (_name, setup) => {
    const fill = (v: string) => v.replace('<config>', configFile);
    const failed = sim.control.addRun({ appId: 2, state: 'error', reason: 'disk full' });
    const slackBefore = receiver.received.length;
    const mailBefore = sink.messages.length;
    const daemonEnv = {
      ...TOKEN(),
      ...Object.fromEntries(Object.entries(setup.daemonEnv).map(([k, v]) => [k, fill(v!)])),
    };
    const checked = await runCli(['check', ...setup.option.map(fill), '--job', 'runs'], {
      env: daemonEnv,
      defaultConfigFile: setup.defaultConfigFile(),
    });
    expect(checked.code).toBe(0);

    // The message about the failed run, in Slack and by email; the same line in each.
    const payload = receiver.received.slice(slackBefore).find((p) => JSON.stringify(p).includes('disk full'));
    const mail = sink.messages.slice(mailBefore).find((m) => (m.text ?? '').includes('disk full'));
    const line = slackCommand(payload!);
    expect(line).not.toBeNull();
    expect(textCommand(mail!.text ?? '')).toBe(line);
    expect(htmlCommand(mail!.html ?? '')).toBe(line);

    // A real shell splits the line into the words the person's `deploy-watchdog` gets.
    const run = bench.run(line!, 'bash -c');
    expect(run).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(run.calls).toHaveLength(1);
    const words = run.calls[0]!;
    expect(words[0]).toBe('silence');
    expect(words.includes('--config')).toBe(setup.namesConfig);
    if (setup.namesConfig) expect(words.slice(1, 3)).toEqual(['--config', configFile]);

    // Those words, as the real command, in the person's environment, which needs none of the
    // daemon's secrets (state commands tolerate them unset). As printed, the reason is a
    // placeholder, refused; with the person's own reason for `…`, the silence is made.
    const personEnv = { ...setup.personEnv, USER: 'ops-alice' };
    expect(words.at(-1)).toBe('…');
    const asPrinted = await runCli(words, { env: personEnv, defaultConfigFile: setup.defaultConfigFile() });
    expect(asPrinted.code).toBe(2);
    expect(asPrinted.stderr).toMatch(/--reason '…' is the placeholder of a printed command/);
    const withReason = [...words.slice(0, -1), 'fix deploying'];
    const made = await runCli(withReason, { env: personEnv, defaultConfigFile: setup.defaultConfigFile() });
    expect(made.stderr).toMatch(/^silenced check=failed_runs, /);
    expect(made.code).toBe(0);
    const id = made.stdout.trim();
    const alerts = await runCli(['alerts', '--config', configFile, '--json'], { env: TOKEN() });
    const rows = JSON.parse(alerts.stdout) as { fingerprint: string; silence: string | null }[];
    expect(rows.find((r) => r.fingerprint === `failed_runs/run/${failed.id}`)?.silence).toBe(id);
  });
});
