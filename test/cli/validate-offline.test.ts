/**
 * `validate` where the daemon's secrets are not (CI): each unset `${VAR}` is named with its line
 * and key, everything else is checked with a stand-in for it, and `--require-env` makes them
 * problems again. And the warnings it prints without failing: no channel, a state file this user
 * could not create.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, writeConfig } from '../helpers/cli-harness.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-validate-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A config whose API, channels and SMTP settings all come from variables; `extra` lines appended. */
function config(extra: string[] = []): string {
  return writeConfig(dir, [
    'api:',
    '  base_url: ${DMS_BASE_URL}',
    '  token: ${DMS_API_TOKEN}',
    'notify:',
    '  channels:',
    '    - name: ops-slack',
    '      type: slack',
    '      webhook_url: ${SLACK_WEBHOOK_URL}',
    '    - name: ops-mail',
    '      type: email',
    '      smtp:',
    '        host: ${SMTP_HOST}',
    '        port: ${SMTP_PORT}',
    '        tls_reject_unauthorized: ${SMTP_VERIFY}',
    '        auth: { user: watchdog, pass: "${SMTP_PASSWORD}" }',
    '      from: ${MAIL_FROM}',
    '      to: [ops@example.com]',
    ...extra,
  ]);
}

const ALL_UNSET =
  'DMS_BASE_URL, DMS_API_TOKEN, SLACK_WEBHOOK_URL, SMTP_HOST, SMTP_PORT, SMTP_VERIFY, SMTP_PASSWORD, MAIL_FROM';

describe('validate without the secrets', () => {
  it('names every unset variable with its line and key, checks the rest, and exits 0', async () => {
    const file = config();
    const { code, stdout, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      `${file}: OK but for 8 variables not set here (${ALL_UNSET}), 2 channels (ops-slack:slack, ops-mail:email), 0 routes, 7 jobs (runs, attention, urls, backups, maintenance, servers, installers), remediation off with 0 policies\n`,
    );
    expect(stderr.split('\n')).toEqual([
      `${file}:2 api.base_url: \${DMS_BASE_URL} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:3 api.token: \${DMS_API_TOKEN} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:8 notify.channels[0].webhook_url: \${SLACK_WEBHOOK_URL} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:12 notify.channels[1].smtp.host: \${SMTP_HOST} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:13 notify.channels[1].smtp.port: \${SMTP_PORT} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:14 notify.channels[1].smtp.tls_reject_unauthorized: \${SMTP_VERIFY} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:15 notify.channels[1].smtp.auth.pass: \${SMTP_PASSWORD} is not set here; checked with a stand-in (the daemon needs it set)`,
      `${file}:16 notify.channels[1].from: \${MAIL_FROM} is not set here; checked with a stand-in (the daemon needs it set)`,
      '',
    ]);
  });

  it.each([
    ['socket', 'app_token: "${SLACK_APP_TOKEN}"', 'SLACK_APP_TOKEN'],
    ['http', 'signing_secret: "${SLACK_SIG}"', 'SLACK_SIG'],
  ])("checks a Slack app's interactions over %s with a stand-in for its unset secret", async (mode, secret, name) => {
    const file = writeConfig(dir, [
      'api: { base_url: https://manage.example.com, token: tok-1234 }',
      'notify:',
      '  channels:',
      '    - name: ops-app',
      '      type: slack_app',
      '      bot_token: xoxb-not-secret-here',
      '      channel: C0123ABCD',
      `      interactions: { mode: ${mode}, ${secret} }`,
    ]);
    const { code, stdout, stderr } = await runCli(['validate', '--config', file]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`OK but for 1 variable not set here (${name})`);
  });

  it('still finds every other problem, and does not list a problem for an unset variable', async () => {
    const file = config(['jobs:', '  urls: "60 * * * *"', 'alerts: { send_resolved: maybe }']);
    const { code, stdout, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([
      `${file}:19 jobs.urls: the minute field is "60", and minute takes 0-59 (a value, a range a-b, a list a,b, a step */n or a-b/n, or *)`,
      `${file}:20 alerts.send_resolved: must be true or false, unquoted, not a string (yes, no, on and off are text in YAML 1.2)`,
      `${file}: 2 problems`,
      '',
    ]);
  });

  it('checks the values it has around the ones it has not', async () => {
    const file = config();
    const { code, stderr } = await runCli(['validate', '--config', file], {
      env: { SMTP_PORT: '70000', MAIL_FROM: 'not an address' },
    });
    expect(code).toBe(2);
    expect(stderr).toContain(`${file}:13 notify.channels[1].smtp.port: must be at most 65535`);
    expect(stderr).toContain(`${file}:16 notify.channels[1].from: must be an email address`);
    expect(stderr).toContain(`${file}: 2 problems`);
  });

  it('with --require-env, counts each unset variable as a problem (exit 2)', async () => {
    const file = config();
    const { code, stdout, stderr } = await runCli(['validate', '--config', file, '--require-env']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      `${file}:3 api.token: environment variable DMS_API_TOKEN is not set (and no default is given with \${DMS_API_TOKEN:-…})`,
    );
    expect(stderr).toContain(`${file}: 8 problems`);
  });

  it('takes a secret file the daemon mounts, and not here, as it takes an unset variable', async () => {
    const file = config();
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('${DMS_API_TOKEN}', '${file:/run/secrets/dms-token}'));
    const { code, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(0);
    expect(stderr).toContain(
      `${file}:3 api.token: file /run/secrets/dms-token does not exist here; checked with a stand-in (the daemon needs it set)`,
    );
    const required = await runCli(['validate', '--config', file, '--require-env']);
    expect(required.code).toBe(2);
    expect(required.stderr).toContain(`${file}:3 api.token: file /run/secrets/dms-token does not exist`);
  });

  it('says OK without a word about variables once they are all set', async () => {
    const file = config();
    const env = {
      DMS_BASE_URL: 'https://manage.example.com',
      DMS_API_TOKEN: 'tok-not-printed-1234',
      SLACK_WEBHOOK_URL: 'https://hooks.example/s3cret-hook',
      SMTP_HOST: 'smtp.example.com',
      SMTP_PORT: '587',
      SMTP_VERIFY: 'true',
      SMTP_PASSWORD: 'pw-not-printed-5678',
      MAIL_FROM: 'watchdog@example.com',
    };
    for (const flags of [[], ['--require-env']]) {
      const { code, stdout, stderr } = await runCli(['validate', '--config', file, ...flags], { env });
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: OK, 2 channels`));
      expect(stderr).toBe('');
      for (const secret of ['tok-not-printed-1234', 's3cret-hook', 'pw-not-printed-5678']) {
        expect(stdout + stderr).not.toContain(secret);
      }
    }
  });
});

describe('validate warnings (printed, never failing the check)', () => {
  it('warns of a configuration without a channel', async () => {
    const file = writeConfig(dir, ['api: { base_url: "https://manage.example.com", token: "${T:-t}" }']);
    const { code, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(0);
    expect(stderr).toBe(
      `${file} notify.channels: warning: no channel is configured: alerts are recorded (see \`deploy-watchdog alerts\`) and nobody is told; add one (type: log writes them to the daemon's log)\n`,
    );
  });

  it('warns of a state file in a directory that does not exist here', async () => {
    const file = writeConfig(dir, [
      'api: { base_url: "https://manage.example.com", token: "${T:-t}" }',
      'state: { path: /var/lib/deploy-watchdog-nowhere/state.db }',
      'notify: { channels: [{ name: c, type: log }] }',
    ]);
    const { code, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(0);
    expect(stderr).toBe(
      `${file} state.path: warning: /var/lib/deploy-watchdog-nowhere does not exist here, so the daemon cannot create state.db in it (create the directory, or set another state.path)\n`,
    );
  });

  it.each([
    ['a duration', 'deadline: 10m', 'is deprecated: its duration is taken as jobs.read_ceiling'],
    [
      'auto',
      'deadline: auto',
      'is deprecated: "auto" is ignored, a read that takes longer than its schedule now finishes',
    ],
    ['beside read_ceiling', 'deadline: 10m, read_ceiling: 20m', 'is deprecated and ignored: jobs.read_ceiling is set'],
  ])('warns of the deprecated jobs.deadline (%s)', async (_what, jobs, said) => {
    const file = writeConfig(dir, [
      'api: { base_url: "https://manage.example.com", token: "${T:-t}" }',
      'notify: { channels: [{ name: c, type: log }] }',
      `jobs: { ${jobs} }`,
    ]);
    const { code, stderr } = await runCli(['validate', '--config', file]);
    expect(code).toBe(0);
    expect(stderr).toContain(`${file} jobs.deadline: warning: ${said}`);
  });
});

describe('plain SMTP with a password', () => {
  const mail = (host: string, secure: string) =>
    writeConfig(dir, [
      'api: { base_url: "https://manage.example.com", token: "${T:-t}" }',
      'notify:',
      '  channels:',
      `    - { name: m, type: email, smtp: { host: "${host}", secure: ${secure}, auth: { user: u, pass: p } }, from: a@example.com, to: [b@example.com] }`,
    ]);

  it.each(['mail.example.com', '10.0.0.25', 'localhost.example.com'])(
    'is refused to %s, which is not loopback, naming the key',
    async (host) => {
      const file = mail(host, 'none');
      const { code, stderr } = await runCli(['validate', '--config', file]);
      expect(code).toBe(2);
      expect(stderr).toContain(
        `${file}:4 notify.channels[0].smtp.secure: is "none" with smtp.auth: the password would cross the network in clear text to smtp.host, which is not loopback; use starttls or tls`,
      );
    },
  );

  it.each([
    ['127.0.0.1', 'none'],
    ['localhost', 'none'],
    ['::1', 'none'],
    ['mail.example.com', 'starttls'],
    ['mail.example.com', 'tls'],
  ])('is taken to %s with secure: %s', async (host, secure) => {
    const { code } = await runCli(['validate', '--config', mail(host, secure)]);
    expect(code).toBe(0);
  });
});
