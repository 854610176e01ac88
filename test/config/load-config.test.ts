import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig, loadConfigSection, loadConfigWithUnset, parseConfig } from '../../src/config/load-config.js';
import { secretsIn } from '../../src/config/secret.js';
import { Secret } from '../../src/lib/secret.js';

const TOKEN = 'dms-token-6f1c2a9e';
const WEBHOOK = 'https://hooks.slack.example/services/T000/B000/s3cr3tW3bh00k';
const SMTP_PASS = 'smtp-pass-77ab';
const DB_PASSWORD = 'db-pass-51c0ffee';
const DATABASE_URL = `postgres://watchdog:${DB_PASSWORD}@db.example.com:5432/watchdog`;
const ENV = { DMS_API_TOKEN: TOKEN, SLACK_WEBHOOK_URL: WEBHOOK, SMTP_PASSWORD: SMTP_PASS, DATABASE_URL };

const MINIMAL = `api:
  base_url: https://manage.example.com
  token: \${DMS_API_TOKEN}
`;

function errorOf(text: string, env: NodeJS.ProcessEnv = ENV): ConfigError {
  try {
    parseConfig(text, env, 'x.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-config-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('parseConfig: bad configurations name the key path and the line', () => {
  // Each case: the YAML, the path and line the problem must name, and what the message says.
  it.each([
    {
      name: 'unknown key, with a suggestion',
      yaml: `${MINIMAL}checks:\n  failed_runs:\n    retrying_grase: 30m\n`,
      path: 'checks.failed_runs.retrying_grase',
      line: 6,
      message: /unknown key "retrying_grase" \(did you mean "retrying_grace"\?\)/,
    },
    {
      name: "unknown key of a channel, suggested from that channel's kind",
      yaml: `${MINIMAL}notify:\n  channels:\n    - { name: s, type: slack, webhok_url: "https://h.example/x" }\n`,
      path: 'notify.channels[0].webhok_url',
      line: 6,
      message: /unknown key "webhok_url" \(did you mean "webhook_url"\?\)/,
    },
    {
      name: 'unknown key of a channel, never suggested from another kind',
      yaml: `${MINIMAL}notify:\n  channels:\n    - { name: l, type: log, smtpp: x }\n`,
      path: 'notify.channels[0].smtpp',
      line: 6,
      message: /unknown key "smtpp"$/,
    },
    {
      name: 'unknown top-level section',
      yaml: `${MINIMAL}notifications: {}\n`,
      path: 'notifications',
      line: 4,
      message: /unknown key "notifications"/,
    },
    {
      name: 'wrong type',
      yaml: `${MINIMAL}api_extra: 1\n`.replace('api_extra: 1\n', 'alerts:\n  send_resolved: "yes"\n'),
      path: 'alerts.send_resolved',
      line: 5,
      message: /must be true or false, unquoted, not a string/,
    },
    {
      name: 'number out of range',
      yaml: `${MINIMAL}  page_size: 0\n`,
      path: 'api.page_size',
      line: 4,
      message: /must be at least 1/,
    },
    {
      name: 'an extra value of a field the reference states no values for',
      yaml: `${MINIMAL}  extra_values: { run_state: { odd: failed } }\n`,
      path: 'api.extra_values.run_state',
      line: 4,
      message: /unknown key "run_state"/,
    },
    {
      name: 'an extra value meaning no stated value',
      yaml: `${MINIMAL}  extra_values: { ssl_status: { revoked: broken } }\n`,
      path: 'api.extra_values.ssl_status.revoked',
      line: 4,
      message:
        /must be one of the values the reference states for ssl_status: valid, expiring_soon, expired, error, unknown/,
    },
    {
      name: 'an extra value that is a stated one',
      yaml: `${MINIMAL}  extra_values: { ssl_status: { error: expired } }\n`,
      path: 'api.extra_values.ssl_status.error',
      line: 4,
      message: /is already a stated value of ssl_status/,
    },
    {
      name: 'bad duration',
      yaml: `${MINIMAL}state:\n  retention: 30 days\n`,
      path: 'state.retention',
      line: 5,
      message: /must be a duration such as 500ms, 30s/,
    },
    {
      name: 'bare number for a duration',
      yaml: `${MINIMAL}  timeout: 30\n`,
      path: 'api.timeout',
      line: 4,
      message: /a string with a unit/,
    },
    {
      name: 'bad cron',
      yaml: `${MINIMAL}jobs:\n  urls: "*/15 * *"\n`,
      path: 'jobs.urls',
      line: 5,
      message: /has 3 fields; must be a cron expression of 5 fields \(minute hour day month weekday\) or 6/,
    },
    {
      name: 'cron with a value out of range',
      yaml: `${MINIMAL}jobs:\n  runs: "61 * * * *"\n`,
      path: 'jobs.runs',
      line: 5,
      message: /the minute field is "61", and minute takes 0-59/,
    },
    {
      name: 'missing base_url',
      yaml: `api:\n  token: abcdefgh\n`,
      path: 'api.base_url',
      line: 1,
      message: /is required/,
    },
    {
      name: 'base_url not http(s)',
      yaml: MINIMAL.replace('https://manage.example.com', 'ftp://manage.example.com'),
      path: 'api.base_url',
      line: 2,
      message: /must be an http\(s\) URL/,
    },
    {
      name: 'base_url with the API prefix',
      yaml: MINIMAL.replace('https://manage.example.com', 'https://manage.example.com/api/v1'),
      path: 'api.base_url',
      line: 2,
      message: /without \/api\/v1/,
    },
    {
      name: 'missing token',
      yaml: `api:\n  base_url: https://manage.example.com\n`,
      path: 'api.token',
      line: 1,
      message: /is required: give token .* or token_file/,
    },
    {
      name: 'token and token_file both',
      yaml: `${MINIMAL}  token_file: /nonexistent/token\n`,
      path: 'api.token_file',
      line: 4,
      message: /give token or token_file, not both/,
    },
    {
      name: 'missing api section',
      yaml: `state:\n  retention: 30d\n`,
      path: 'api',
      line: 1,
      message: /is required/,
    },
    {
      name: 'unset ${VAR}',
      yaml: MINIMAL,
      env: {},
      path: 'api.token',
      line: 3,
      message: /environment variable DMS_API_TOKEN is not set/,
    },
    {
      name: 'route to an unknown channel',
      yaml: `${MINIMAL}notify:\n  channels:\n    - { name: console, type: log }\n  routes:\n    - channels: [console]\n    - channels: [console, pager]\n`,
      path: 'notify.routes[1].channels[1]',
      line: 9,
      message: /unknown channel "pager" \(known channels: console\)/,
    },
    {
      name: 'escalation to an unknown channel',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: console, type: log }]\n  routes:\n    - { channels: [console], escalate_after: 15m, escalate_to: [pager] }\n`,
      path: 'notify.routes[0].escalate_to[0]',
      line: 7,
      message: /unknown channel "pager" \(known channels: console\)/,
    },
    {
      name: 'route to an unknown mute window',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: console, type: log }]\n  routes:\n    - { channels: [console], mute_windows: [weekend] }\n`,
      path: 'notify.routes[0].mute_windows[0]',
      line: 7,
      message: /unknown mute window "weekend" \(no mute windows are defined\)/,
    },
    {
      name: 'route matching an unknown check',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: console, type: log }]\n  routes:\n    - { channels: [console], match: { check: [failed_runs, stuck_run] } }\n`,
      path: 'notify.routes[0].match.check[1]',
      line: 7,
      message: /unknown check "stuck_run" \(known checks: .*stuck_runs/,
    },
    {
      name: 'policy matching an unknown check',
      yaml: `${MINIMAL}remediation:\n  enabled: true\n  policies:\n    - name: retry\n      action: runs.retry\n      match: { check: failed_run }\n`,
      path: 'remediation.policies[0].match.check',
      line: 9,
      message: /unknown check "failed_run" \(known checks: .*failed_runs/,
    },
    {
      name: 'policy matching an environment type the reference does not have',
      yaml: `${MINIMAL}remediation:\n  policies:\n    - name: retry\n      action: runs.retry\n      match: { environment_type: [staging, prod] }\n`,
      path: 'remediation.policies[0].match.environment_type[1]',
      line: 8,
      message: /unknown environment type "prod" \(known environment types: production, staging, development\)/,
    },
    {
      name: 'duplicate channel name',
      yaml: `${MINIMAL}notify:\n  channels:\n    - { name: ops, type: log }\n    - { name: ops, type: log }\n`,
      path: 'notify.channels[1].name',
      line: 7,
      message: /duplicate channel name "ops"/,
    },
    ...[
      ['a webhook URL', 'https://hooks.slack.com/services/T000/B000/XXXXXXXX'],
      ['an app-level token', 'xapp-1-A0123-4567-abcdef'],
      ['a user token', 'xoxp-1234-5678-abcdef'],
    ].map(([what, value]) => ({
      name: `${what} as a Slack bot token`,
      env: ENV,
      yaml: `${MINIMAL}notify:\n  channels:\n    - name: app\n      type: slack_app\n      bot_token: ${value}\n      channel: C0123ABCD\n`,
      path: 'notify.channels[0].bot_token',
      line: 8,
      message:
        /must be the app's Bot User OAuth Token \(xoxb-…, from OAuth & Permissions\); a webhook URL goes in a channel of type: slack \(webhook_url\), an app-level token \(xapp-…\) in interactions\.app_token/,
    })),
    {
      name: 'Slack interactions over HTTP with the listener off',
      yaml: `${MINIMAL}notify:\n  channels:\n    - name: app\n      type: slack_app\n      bot_token: xoxb-test\n      channel: C0123ABCD\n      interactions: { mode: http, signing_secret: 0123456789abcdef0123 }\nserver:\n  listen: "off"\n`,
      path: 'notify.channels[0].interactions.mode',
      line: 10,
      message: /is http, but server.listen is off: Slack posts the clicks to \/slack\/interactions there/,
    },
    {
      name: 'unknown channel type',
      yaml: `${MINIMAL}notify:\n  channels:\n    - name: ops\n      type: victorops\n`,
      path: 'notify.channels[0].type',
      line: 7,
      message:
        /must be one of "slack", "slack_app", "email", "log", "webhook", "pagerduty", "opsgenie", "teams", "discord"/,
    },
    {
      name: 'bad regex',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: c, type: log }]\n  routes:\n    - channels: [c]\n      match_re:\n        app: "shop(-[a-z]+"\n`,
      path: 'notify.routes[0].match_re.app',
      line: 9,
      message: /is not a regular expression RE2 takes \(error parsing regexp: missing closing \)/,
    },
    {
      name: 'bad label name in match',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: c, type: log }]\n  routes:\n    - channels: [c]\n      match: { "env-type": production }\n`,
      path: 'notify.routes[0].match["env-type"]',
      line: 8,
      message: /is not an accepted key: is not a label name/,
    },
    {
      name: 'empty list in match',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: c, type: log }]\n  routes:\n    - channels: [c]\n      match: { app: [] }\n`,
      path: 'notify.routes[0].match.app',
      line: 8,
      message: /must list at least one value/,
    },
    {
      name: 'a repeat interval of 0s (it would repeat every cycle)',
      yaml: `${MINIMAL}alerts:\n  repeat_interval: 0s\n`,
      path: 'alerts.repeat_interval',
      line: 5,
      message: /must be longer than 0s/,
    },
    {
      name: 'alerts.for of 0 cycles',
      yaml: `${MINIMAL}alerts:\n  for: 0\n`,
      path: 'alerts.for',
      line: 5,
      message: /must be at least 1/,
    },
    {
      name: 'bad time zone',
      yaml: `${MINIMAL}notify:\n  mute_windows:\n    - name: nights\n      time_zone: Europe/Atlantis\n      times: [{ start: "22:00", end: "06:00" }]\n`,
      path: 'notify.mute_windows[0].time_zone',
      line: 7,
      message: /is not a known IANA time zone/,
    },
    {
      name: 'bad time of day',
      yaml: `${MINIMAL}notify:\n  digest:\n    at: "9am"\n`,
      path: 'notify.digest.at',
      line: 6,
      message: /must be a time of day HH:MM/,
    },
    {
      name: 'critical_days not below warn_days',
      yaml: `${MINIMAL}checks:\n  certificates: { warn_days: 7, critical_days: 7 }\n`,
      path: 'checks.certificates.critical_days',
      line: 5,
      message: /must be less than warn_days/,
    },
    {
      name: 'unknown environment type in backups.max_age',
      yaml: `${MINIMAL}checks:\n  backups:\n    max_age:\n      prod: 26h\n`,
      path: 'checks.backups.max_age.prod',
      line: 7,
      message: /unknown key "prod"/,
    },
    {
      name: 'a backup state word in two lists',
      yaml: `${MINIMAL}checks:\n  backups:\n    succeeded_states: [done, ok]\n    failed_states: [failed, ok]\n`,
      path: 'checks.backups.failed_states',
      line: 7,
      message: /"ok" is also in succeeded_states: a state can be in one list only/,
    },
    {
      name: 'unknown policy action',
      yaml: `${MINIMAL}remediation:\n  policies:\n    - { name: p, action: apps.update }\n`,
      path: 'remediation.policies[0].action',
      line: 6,
      message: /must be one of "runs.retry", "apps.backup", "apps.restart", "apps.maintenance"/,
    },
    {
      name: 'a word during_silence does not know',
      yaml: `${MINIMAL}remediation:\n  during_silence: pause\n`,
      path: 'remediation.during_silence',
      line: 5,
      message: /must be one of "hold", "act"/,
    },
    {
      name: 'Leave maintenance asked for automatically',
      yaml: `${MINIMAL}remediation:\n  policies:\n    - { name: p, action: apps.maintenance, automatic: true }\n`,
      path: 'remediation.policies[0].automatic',
      line: 6,
      message: /apps.maintenance is never made automatically: only a person can tell/,
    },
    {
      name: 'policy key of the other action',
      yaml: `${MINIMAL}remediation:\n  policies:\n    - name: p\n      action: runs.retry\n      format: zip\n`,
      path: 'remediation.policies[0].format',
      line: 8,
      message: /unknown key "format"/,
    },
    {
      name: 'duplicate policy name',
      yaml: `${MINIMAL}remediation:\n  policies:\n    - { name: p, action: runs.retry }\n    - { name: p, action: apps.backup }\n`,
      path: 'remediation.policies[1].name',
      line: 7,
      message: /duplicate policy name "p"/,
    },
    {
      name: 'remediation enabled without policies',
      yaml: `${MINIMAL}remediation:\n  enabled: true\n`,
      path: 'remediation.enabled',
      line: 5,
      message: /remediation.policies is empty/,
    },
    {
      name: 'remediation poll interval under a second',
      yaml: `${MINIMAL}remediation:\n  poll_interval: 500ms\n`,
      path: 'remediation.poll_interval',
      line: 5,
      message: /must be at least 1s/,
    },
    {
      name: 'rate limit above the maximum',
      yaml: `${MINIMAL}  requests_per_second: 5000\n`,
      path: 'api.requests_per_second',
      line: 4,
      message: /must be at most 1000/,
    },
    {
      name: 'rate limit as another word',
      yaml: `${MINIMAL}  requests_per_second: none\n`,
      path: 'api.requests_per_second',
      line: 4,
      message: /must be "off" or a number of requests per second/,
    },
    {
      name: 'a log source the reference does not name',
      yaml: `${MINIMAL}notify:\n  context:\n    logs:\n      sources: { update: build }\n`,
      path: 'notify.context.logs.sources.update',
      line: 7,
      message: /must be one of main, setup, transfer, restore, backup, upgrade, script/,
    },
    {
      name: 'a context wait past 10m',
      yaml: `${MINIMAL}notify:\n  context: { wait: 1h }\n`,
      path: 'notify.context.wait',
      line: 5,
      message: /must be at most 10m/,
    },
    {
      name: 'listen address',
      yaml: `${MINIMAL}server:\n  listen: localhost\n`,
      path: 'server.listen',
      line: 5,
      message: /must be HOST:PORT \(e\.g\. 127\.0\.0\.1:9464\), :PORT, or "off"/,
    },
    {
      name: 'listen port out of range',
      yaml: `${MINIMAL}server:\n  listen: "127.0.0.1:70000"\n`,
      path: 'server.listen',
      line: 5,
      message: /port must be between 1 and 65535|must be "off" or HOST:PORT/,
    },
    {
      name: 'escalate_after without escalate_to',
      yaml: `${MINIMAL}notify:\n  channels: [{ name: l, type: log }]\n  routes:\n    - { channels: [l], escalate_after: 15m }\n`,
      path: 'notify.routes[0].escalate_to',
      line: 7,
      message: /escalate_after and escalate_to go together/,
    },
    {
      name: 'one duration where a mapping by environment type is wanted',
      yaml: `${MINIMAL}checks:\n  backups: { max_age: 26h }\n`,
      path: 'checks.backups.max_age',
      line: 5,
      message: /must be a mapping \(key: value\), not a string$/,
    },
    {
      name: 'a YAML 1.1 boolean',
      yaml: `${MINIMAL}checks:\n  backups:\n    offsite: yes\n`,
      path: 'checks.backups.offsite',
      line: 6,
      message: /must be true or false, unquoted, not a string \(yes, no, on and off are text in YAML 1\.2\)$/,
    },
    ...[
      ['api', 'timeout', 4],
      ['state', 'retention', 5],
      ['remediation', 'follow_timeout', 5],
    ].map(([section, key, line]) => ({
      name: `${section}.${key} of 0s`,
      env: ENV,
      yaml: `${MINIMAL}${section === 'api' ? '' : `${section}:\n`}  ${key}: 0s\n`,
      path: `${section}.${key}`,
      line: line as number,
      message: /must be longer than 0s/,
    })),
    ...['max_age', 'timeout', 'interval'].map((key) => ({
      name: `notify.delivery.${key} of 0s`,
      env: ENV,
      yaml: `${MINIMAL}notify:\n  delivery:\n    ${key}: 0s\n`,
      path: `notify.delivery.${key}`,
      line: 6,
      message: /must be longer than 0s/,
    })),
    ...[
      ['5sec', '5s'],
      ['2 hours', '2h'],
      ['1H 30M', '1h30m'],
    ].map(([written, meant]) => ({
      name: `a duration written ${written}`,
      env: ENV,
      yaml: `${MINIMAL}jobs:\n  jitter: ${written}\n`,
      path: 'jobs.jitter',
      line: 5,
      message: new RegExp(`must be a duration such as .*1h30m \\(did you mean "${meant}"\\?\\)$`),
    })),
    {
      name: 'duplicate key',
      yaml: `${MINIMAL}state:\n  path: a.db\n  path: b.db\n`,
      path: '',
      line: 6,
      message:
        /YAML syntax error: "path" is given twice in one mapping \(first at line 5\): merge the two, or remove one/,
    },
  ])('$name', ({ yaml, env, path: keyPath, line, message }) => {
    const err = errorOf(yaml, env ?? ENV);
    const problem = err.problems.find((p) => p.path === keyPath && message.test(p.message));
    expect(problem, err.message).toBeDefined();
    expect(problem?.line).toBe(line);
    const printed = keyPath ? `x.yaml:${line} ${keyPath}: ` : `x.yaml:${line}: `;
    expect(
      err.message.split('\n').some((l) => l.startsWith(printed) && message.test(l)),
      err.message,
    ).toBe(true);
  });

  it.each([
    [`api:\n  base_url: https://manage.example.com\n  token: "${TOKEN}\n  x: [1, 2\n`, 5, /Missing closing "quote/],
    [
      `api:\n  base_url: https://manage.example.com\n  token: ${TOKEN}\n   oops ${TOKEN}: [\n`,
      3,
      /Nested mappings are not allowed .*\(and 2 more after it/,
    ],
    [
      `api: { base_url: https://manage.example.com, token: ${TOKEN} }\n}\n${TOKEN}\n`,
      2,
      /Unexpected flow-map-end token in YAML stream/,
    ],
  ])('reports a YAML syntax error with its line, never quoting the source (%#)', (yaml, line, message) => {
    const err = errorOf(yaml);
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ path: '', line });
    expect(err.message).toMatch(new RegExp(`^x\\.yaml:${line}: YAML syntax error: `));
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain(TOKEN);
  });

  it('lists every problem at once, in line order', () => {
    const err = errorOf(`api:
  base_url: nope
  token: \${UNSET_ONE}
state:
  retention: forever
jobs:
  runs: "bad"
bogus: 1
`);
    expect(err.problems.map((p) => [p.line, p.path])).toEqual([
      [2, 'api.base_url'],
      [3, 'api.token'],
      [5, 'state.retention'],
      [7, 'jobs.runs'],
      [8, 'bogus'],
    ]);
    expect(err.message.split('\n')).toHaveLength(5);
  });

  it('reports an empty file as a missing api section', () => {
    const err = errorOf('');
    expect(err.problems).toEqual([expect.objectContaining({ path: 'api', message: 'is required' })]);
  });

  it('refuses a file that is not a mapping', () => {
    const err = errorOf('- just\n- a list\n');
    expect(err.problems[0]).toMatchObject({ path: '', line: 1, message: 'must be a mapping (key: value), not a list' });
  });
});

/** A config whose `routes` share one channel list by a YAML alias, `uses` times. */
function aliasedRoutes(uses: number): string {
  const routes = Array.from({ length: uses }, (_, i) => `    - { match: { app: a${i + 1} }, channels: *c }`);
  return `${MINIMAL}notify:\n  channels: [{ name: log, type: log }]\n  routes:\n    - { match: { app: a0 }, channels: &c [log] }\n${routes.join('\n')}\n`;
}

describe('parseConfig: YAML aliases', () => {
  it.each([101, 500])('accepts one alias used %i times (a shared channel list)', (uses) => {
    const config = parseConfig(aliasedRoutes(uses), ENV, 'x.yaml');
    expect(config.notify.routes).toHaveLength(uses + 1);
    expect(config.notify.routes.at(-1)!.channels).toEqual(['log']);
  });

  it('refuses an alias bomb as a problem of the file, at the first alias, instead of throwing', () => {
    const levels = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const bomb = levels.map(
      (name, i) =>
        `  ${name}: &${name} [${Array(9)
          .fill(i === 0 ? 'lol' : `*${levels[i - 1]}`)
          .join(', ')}]`,
    );
    const err = errorOf(`${MINIMAL}x:\n${bomb.join('\n')}\n`);
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ path: '', line: 6 });
    expect(err.message).toMatch(/^x\.yaml:6: YAML cannot be read: its aliases expand to more than 10000 nodes/);
  });
});

describe('parseConfig: Compose-style anchors', () => {
  it('takes merge keys, and top-level x- blocks that only hold anchors', () => {
    const text = `x-slack: &slack
  type: slack
  webhook_url: \${SLACK_WEBHOOK_URL}
${MINIMAL}notify:
  channels:
    - { <<: *slack, name: ops }
    - <<: *slack
      name: team
`;
    const config = parseConfig(text, ENV, 'x.yaml');
    expect(config.notify.channels.map((c) => [c.name, c.type])).toEqual([
      ['ops', 'slack'],
      ['team', 'slack'],
    ]);
  });

  it('still refuses an unknown top-level key that is not x-', () => {
    expect(errorOf(`${MINIMAL}y-slack: {}\n`).message).toMatch(/unknown key "y-slack"/);
  });
});

describe('parseConfig: defaults and values', () => {
  it('fills every default from a minimal file', () => {
    const config = parseConfig(MINIMAL, ENV, 'x.yaml', { baseDir: '/etc/dw' });
    expect(config.api).toMatchObject({
      base_url: 'https://manage.example.com',
      namespaces: [],
      requests_per_second: 10,
      timeout: 30_000,
      max_retries: 3,
      page_size: 500,
      concurrency: 4,
      max_answer_size: 8 * 1024 * 1024,
      max_answer_values: 250_000,
      max_list_items: 200_000,
      extra_values: {},
    });
    expect(config.state).toEqual({
      path: '/etc/dw/deploy-watchdog.db',
      retention: 30 * 86_400_000,
      connect_timeout: 5_000,
      statement_timeout: 30_000,
      leader: { lease: 10_000 },
    });
    expect(config.jobs).toEqual({
      runs: '*/1 * * * *',
      attention: '*/5 * * * *',
      urls: '*/15 * * * *',
      backups: '0 * * * *',
      maintenance: '*/30 * * * *',
      servers: '*/1 * * * *',
      installers: '*/5 * * * *',
      jitter: 5_000,
    });
    expect(config.checks.failed_runs).toEqual({
      enabled: true,
      failed_states: ['error'],
      succeeded_states: ['done'],
      other_states: ['cancelled'],
      retrying_grace: 1_800_000,
      lookback: 604_800_000,
    });
    expect(config.checks.stuck_runs).toEqual({
      enabled: true,
      active_states: ['queued', 'running'],
      max_duration: 7_200_000,
    });
    expect(config.checks.certificates).toEqual({
      enabled: true,
      warn_days: 14,
      critical_days: 3,
      unknown_after: 86_400_000,
    });
    expect(config.checks.backups).toEqual({
      enabled: true,
      max_age: { production: 93_600_000, staging: 691_200_000, development: null },
      succeeded_states: ['done'],
      running_states: ['running'],
      failed_states: ['failed'],
      require_verified: true,
      offsite: true,
      offsite_failed_states: ['failed'],
      full_formats: ['zip'],
      offsite_required: true,
      offsite_upload_timeout: 21_600_000,
      size_drop: 0.5,
      size_history: 4,
    });
    expect(config.checks.attention).toEqual({
      enabled: true,
      min_severity: 'warning',
      ignore_rules: [],
      fold_wait: 20 * 60_000,
      reported_by: {},
    });
    expect(config.checks.sources).toEqual({ failure_threshold: 3 });
    expect(config.checks.servers).toEqual({
      enabled: true,
      bad_states: ['error', 'unreachable', 'stopped'],
      other_states: ['running', 'provisioning'],
    });
    expect(config.alerts).toEqual({
      repeat_interval: 14_400_000,
      send_resolved: true,
      for: 1,
      resolve_guard: { min_alerts: 5, max_share: 0.5, confirm_cycles: 2 },
    });
    expect(config.notify).toMatchObject({
      channels: [],
      routes: [],
      group_by: ['check', 'environment_type'],
      max_items_per_message: 10,
      mute_windows: [],
      delivery: {
        max_age: 86_400_000,
        initial_backoff: 10_000,
        max_backoff: 600_000,
        timeout: 15_000,
        interval: 5_000,
      },
      digest: { enabled: false, at: '09:00', time_zone: 'UTC', channels: [] },
      inhibit: { api_unreadable: true, bad_servers: true },
    });
    expect(config.notify.heartbeat).toBeUndefined();
    expect(config.remediation).toEqual({
      enabled: false,
      dry_run: true,
      max_actions_per_hour: 10,
      follow_timeout: 7_200_000,
      poll_interval: 30_000,
      during_silence: 'hold',
      policies: [],
    });
    expect(config.server).toEqual({
      listen: '127.0.0.1:9464',
      console: { enabled: 'auto', allow: { remediate: 'anyone' }, max_silence: 7 * 86_400_000 },
    });
    expect(config.log).toEqual({ level: 'info', format: 'auto', repeat_every: 60_000 });
  });

  it('reads "off" as null for jobs, max ages and the listener, and as Infinity for repeat intervals', () => {
    const config = parseConfig(
      `${MINIMAL}jobs: { attention: "off", urls: "*/10 * * * * *" }
checks: { backups: { max_age: { staging: "off", production: 12h } } }
alerts: { repeat_interval: "off" }
server: { listen: "off" }
`,
      ENV,
      'x.yaml',
    );
    expect(config.jobs.attention).toBeNull();
    expect(config.jobs.urls).toBe('*/10 * * * * *');
    // Environment types left out keep their default.
    expect(config.checks.backups.max_age).toEqual({ production: 43_200_000, staging: null, development: null });
    expect(config.alerts.repeat_interval).toBe(Infinity);
    expect(config.server.listen).toBeNull();
  });

  it.each([
    ['"off"', Infinity],
    ['off', Infinity],
    ['1000', 1000],
    ['2.5', 2.5],
  ])('reads api.requests_per_second: %s as %s requests per second', (value, expected) => {
    const config = parseConfig(`${MINIMAL}  requests_per_second: ${value}\n`, ENV, 'x.yaml');
    expect(config.api.requests_per_second).toBe(expected);
  });

  it('parses policies of both actions with their defaults', () => {
    const config = parseConfig(
      `${MINIMAL}remediation:
  enabled: true
  policies:
    - { name: retry, action: runs.retry, match: { environment_type: [staging, development] }, match_re: { reason: "timed out.*" } }
    - { name: backup, action: apps.backup, match: { environment_type: production }, dry_run: false }
`,
      ENV,
      'x.yaml',
    );
    expect(config.remediation.policies).toEqual([
      {
        name: 'retry',
        action: 'runs.retry',
        match: { environment_type: ['staging', 'development'] },
        match_re: { reason: 'timed out.*' },
        max_attempts: 1,
        automatic: true,
        backoff: 600_000,
        now: false,
      },
      {
        name: 'backup',
        action: 'apps.backup',
        match: { environment_type: 'production' },
        match_re: {},
        dry_run: false,
        max_attempts: 1,
        automatic: true,
        backoff: 3_600_000,
        format: 'zip',
        problems: ['stale'],
        readback: 1_800_000,
      },
    ]);
  });
});

describe('parseConfig: ${VAR} substitution', () => {
  it('substitutes values, uses defaults, keeps $${ literal, and types a whole plain reference', () => {
    const config = parseConfig(
      `api:
  base_url: https://\${DMS_HOST:-manage.example.com}
  token: \${DMS_API_TOKEN}
  page_size: \${PAGE_SIZE}
  namespaces: ["\${NS}", "lit-$\${NS}"]
notify:
  channels:
    - name: mail
      type: email
      smtp:
        host: smtp.example.com
        port: \${SMTP_PORT:-25}
        secure: none
      from: watchdog@example.com
      to: [ops@example.com]
      subject_prefix: "\${PREFIX:-[dw]}"
`,
      { ...ENV, PAGE_SIZE: '200', NS: 'acme' },
      'x.yaml',
    );
    expect(config.api.base_url).toBe('https://manage.example.com');
    expect(config.api.token.reveal()).toBe(TOKEN);
    expect(config.api.page_size).toBe(200);
    expect(config.api.namespaces).toEqual(['acme', 'lit-${NS}']);
    const mail = config.notify.channels[0];
    expect(mail?.type === 'email' && mail.smtp.port).toBe(25);
    expect(mail?.type === 'email' && mail.subject_prefix).toBe('[dw]');
  });

  it('keeps a quoted whole reference a string', () => {
    const err = errorOf(`${MINIMAL}  page_size: "\${PAGE_SIZE}"\n`, { ...ENV, PAGE_SIZE: '200' });
    expect(err.problems).toEqual([
      expect.objectContaining({ path: 'api.page_size', message: 'must be a number, not a string' }),
    ]);
  });

  it('cannot inject YAML through a variable', () => {
    const config = parseConfig(
      `${MINIMAL}state:\n  path: \${STATE_PATH}\n`,
      { ...ENV, STATE_PATH: 'x.db\nretention: 1s\nbogus: [1' },
      'x.yaml',
      { baseDir: '/srv' },
    );
    expect(config.state.retention).toBe(30 * 86_400_000);
    expect(config.state.path).toBe('/srv/x.db\nretention: 1s\nbogus: [1');
  });

  it('does not substitute in keys', () => {
    const err = errorOf(`${MINIMAL}\${SECTION}: {}\n`, { ...ENV, SECTION: 'state' });
    expect(err.problems[0]).toMatchObject({ path: '["${SECTION}"]', message: 'unknown key "${SECTION}"' });
  });
});

describe('loadConfig', () => {
  it('reads token_file relative to the config file, trimmed, as a Secret', () => {
    fs.mkdirSync(path.join(dir, 'secrets'));
    fs.writeFileSync(path.join(dir, 'secrets', 'token'), `  ${TOKEN}\n`);
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(
      file,
      'api:\n  base_url: https://manage.example.com\n  token_file: secrets/token\nstate: { path: data/state.db }\n',
    );
    const config = loadConfig(file, {});
    expect(config.api.token).toBeInstanceOf(Secret);
    expect(config.api.token.reveal()).toBe(TOKEN);
    expect(config.api.token_file).toBe('secrets/token');
    expect(config.state.path).toBe(path.join(dir, 'data', 'state.db'));
  });

  it.each([
    ['missing', undefined, /secrets\/absent does not exist/],
    ['empty', '  \n', /is empty/],
  ])('reports a %s token_file with its line', (_what, content, message) => {
    const tokenPath = path.join(dir, 'secrets', 'absent');
    if (content !== undefined) {
      fs.mkdirSync(path.dirname(tokenPath), { recursive: true });
      fs.writeFileSync(tokenPath, content);
    }
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(file, 'api:\n  base_url: https://manage.example.com\n  token_file: secrets/absent\n');
    expect(() => loadConfig(file, {})).toThrow(ConfigError);
    try {
      loadConfig(file, {});
    } catch (err) {
      const problem = (err as ConfigError).problems[0];
      expect(problem).toMatchObject({ path: 'api.token_file', line: 3 });
      expect(problem?.message).toMatch(message);
    }
  });

  it('reports a missing config file', () => {
    const file = path.join(dir, 'nope.yaml');
    expect(() => loadConfig(file, {})).toThrow(`${file}: cannot read the configuration file: file not found`);
  });

  it('names a key given twice in one mapping, and the line of its first use', () => {
    const file = path.join(dir, 'twice.yaml');
    fs.writeFileSync(file, `${MINIMAL}notify:\n  channels: []\nstate:\n  retention: 30d\nnotify:\n  routes: []\n`);
    expect(() => loadConfig(file, ENV)).toThrow(
      `${file}:8: YAML syntax error: "notify" is given twice in one mapping (first at line 4): merge the two, or remove one`,
    );
  });

  it('refuses a file over 1 MiB without parsing it', () => {
    const file = path.join(dir, 'huge.yaml');
    fs.writeFileSync(file, `${MINIMAL}x-padding: "${'a'.repeat(1024 * 1024)}"\n`);
    expect(() => loadConfig(file, ENV)).toThrow(
      `${file}: is 1048660 bytes, more than the 1 MiB (1048576 bytes) a configuration file may be (a full one is about 40 KiB): is it the right file?`,
    );
  });

  it('refuses a file that is not UTF-8, at the line of the first stray byte', () => {
    const file = path.join(dir, 'latin1.yaml');
    const text = `${MINIMAL}notify:\n  channels:\n    - { name: mail, type: log }\n  routes: [{ channels: [mail] }]\n# Caf\xe9\n`;
    fs.writeFileSync(file, Buffer.from(text, 'latin1'));
    expect(() => loadConfig(file, ENV)).toThrow(`${file}:8: is not UTF-8 text: save the file as UTF-8`);
  });

  it('reads a UTF-8 file that starts with a byte order mark', () => {
    const file = path.join(dir, 'bom.yaml');
    fs.writeFileSync(file, `\ufeff${MINIMAL}`);
    expect(loadConfig(file, ENV).api.base_url).toBe('https://manage.example.com');
  });

  it("parses DESIGN.md's example config", () => {
    const file = path.join(import.meta.dirname, 'fixtures', 'design-example.yaml');
    const config = loadConfig(file, ENV);
    expect(config.api.base_url).toBe('https://manage.example.com');
    expect(config.state.path).toBe('/data/state.db');
    expect(config.checks.failed_runs.retrying_grace).toBe(30 * 60_000);
    expect(config.checks.backups.max_age).toEqual({
      production: 26 * 3_600_000,
      staging: 8 * 86_400_000,
      development: null,
    });
    expect(config.notify.channels.map((c) => c.name)).toEqual(['ops-slack', 'ops-mail']);
    expect(config.notify.routes).toHaveLength(2);
    expect(config.remediation.policies[0]).toMatchObject({
      name: 'retry-nonprod',
      action: 'runs.retry',
      max_attempts: 2,
      backoff: 600_000,
    });
  });
});

describe('secrets stay secret', () => {
  const FULL = `api:
  base_url: https://manage.example.com
  token: \${DMS_API_TOKEN}
notify:
  channels:
    - { name: s, type: slack, webhook_url: "\${SLACK_WEBHOOK_URL}" }
    - name: m
      type: email
      smtp: { host: smtp.example.com, auth: { user: u, pass: "\${SMTP_PASSWORD}" } }
      from: a@example.com
      to: [b@example.com]
  heartbeat: { url: "https://hc.example/ping/\${DMS_API_TOKEN}" }
`;

  it('the loaded config renders no secret through JSON, inspect or String', () => {
    const config = parseConfig(FULL, ENV, 'x.yaml');
    for (const rendered of [JSON.stringify(config), inspect(config, { depth: 10 }), String(config.api.token)]) {
      for (const secret of [TOKEN, WEBHOOK, SMTP_PASS]) expect(rendered).not.toContain(secret);
    }
    expect(config.notify.heartbeat?.url.reveal()).toBe(`https://hc.example/ping/${TOKEN}`);
  });

  it('reads a secret mounted as a file with ${file:…}, relative to the config, and names a file it cannot read', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-files-'));
    fs.writeFileSync(path.join(dir, 'smtp-pass'), `${SMTP_PASS}\n`);
    const yaml = FULL.replace('${SMTP_PASSWORD}', '${file:smtp-pass}');
    const config = parseConfig(yaml, ENV, 'x.yaml', { baseDir: dir });
    const mail = config.notify.channels.find((c) => c.type === 'email');
    expect(mail?.type === 'email' && mail.smtp.auth?.pass.reveal()).toBe(SMTP_PASS);
    expect(JSON.stringify(config)).not.toContain(SMTP_PASS);
    const err = errorOf(FULL.replace('${SMTP_PASSWORD}', '${file:/run/secrets/no-such-file}'));
    expect(err.message).toMatch(
      /x\.yaml:\d+ notify\.channels\[1\]\.smtp\.auth\.pass: file \/run\/secrets\/no-such-file does not exist/,
    );
  });

  it('names the variable of a token_file that cannot be read, never its value (the token, given there by mistake)', () => {
    const err = errorOf(`api:\n  base_url: https://manage.example.com\n  token_file: \${DMS_API_TOKEN}\n`);
    expect(err.message).toContain('api.token_file: the file ${DMS_API_TOKEN} names does not exist');
    expect(err.message).not.toContain(TOKEN);
  });

  it('refuses a base_url carrying a user or password without showing it: it is no secret, and is shown', () => {
    const err = errorOf(MINIMAL.replace('https://manage.example.com', 'https://bob:pw-base-7c1e@manage.example.com'));
    expect(err.message).toContain('api.base_url: must not carry a user or password');
    expect(err.message).not.toContain('pw-base-7c1e');
  });

  it('finds every secret of the config, each once: what answers from outside are scrubbed of', () => {
    const config = parseConfig(FULL, ENV, 'x.yaml');
    const revealed = secretsIn(config).map((s) => s.reveal());
    expect(revealed).toEqual(expect.arrayContaining([TOKEN, WEBHOOK, SMTP_PASS, `https://hc.example/ping/${TOKEN}`]));
    expect(new Set(secretsIn(config)).size).toBe(secretsIn(config).length);
  });

  it.each(['https://hooks.slack.com/services/T000/B000/secret-path-77', 'xapp-1-A0123-secret-88'])(
    'a misplaced Slack secret given as the bot token is refused without being shown (%#)',
    (value) => {
      const yaml = `${MINIMAL}notify:\n  channels:\n    - { name: app, type: slack_app, bot_token: "\${SLACK_BOT_TOKEN}", channel: C0123ABCD }\n`;
      const err = errorOf(yaml, { ...ENV, SLACK_BOT_TOKEN: value });
      expect(err.message).toContain("must be the app's Bot User OAuth Token (xoxb-…");
      expect(err.message).not.toContain(value);
      expect(err.message).not.toContain('secret-');
    },
  );

  it.each([
    ['an invalid webhook URL', { SLACK_WEBHOOK_URL: 'not-a-url-but-secret-9f8e' }, 'not-a-url-but-secret-9f8e'],
    ['a token next to a bad key', { DMS_API_TOKEN: 'tok-abcdef-1234' }, 'tok-abcdef-1234'],
    ['an empty password beside a bad one', { SMTP_PASSWORD: '' }, TOKEN],
  ])('no ConfigError message shows a secret: %s', (_what, override, secret) => {
    const text = `${FULL}  bogus_key: \${DMS_API_TOKEN}\n`;
    const err = errorOf(text, { ...ENV, ...override });
    expect(err.message).not.toContain(secret);
    expect(JSON.stringify(err.problems)).not.toContain(secret);
  });
});

describe('state: path or url', () => {
  it('neither: the SQLite file beside the config', () => {
    const config = parseConfig(MINIMAL, ENV, 'x.yaml', { baseDir: '/etc/dw' });
    expect(config.state.path).toBe('/etc/dw/deploy-watchdog.db');
    expect(config.state.url).toBeUndefined();
  });

  it('url: PostgreSQL, a secret in every rendering, no file', () => {
    const config = parseConfig(`${MINIMAL}state:\n  url: \${DATABASE_URL}\n  retention: 7d\n`, ENV, 'x.yaml');
    expect(config.state.path).toBeUndefined();
    expect(config.state.url?.reveal()).toBe(DATABASE_URL);
    expect(config.state).toMatchObject({
      retention: 7 * 86_400_000,
      connect_timeout: 5_000,
      statement_timeout: 30_000,
      leader: { lease: 10_000 },
    });
    for (const rendered of [JSON.stringify(config), inspect(config, { depth: 10 }), String(config.state.url)]) {
      expect(rendered).not.toContain(DB_PASSWORD);
      expect(rendered).not.toContain('db.example.com');
    }
  });

  it('tls: ca_file resolved against the config file, reject_unauthorized true by default', () => {
    fs.writeFileSync(path.join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\n');
    const file = path.join(dir, 'watchdog.yaml');
    fs.writeFileSync(
      file,
      `${MINIMAL}state:\n  url: \${DATABASE_URL}\n  tls: { ca_file: ca.pem }\n  statement_timeout: 10s\n`,
    );
    const config = loadConfig(file, ENV);
    expect(config.state.tls).toEqual({ ca_file: path.join(dir, 'ca.pem'), reject_unauthorized: true });
    expect(config.state.statement_timeout).toBe(10_000);
  });

  it.each([
    {
      name: 'both path and url',
      state: 'path: ./s.db\n  url: ${DATABASE_URL}',
      path: 'state.url',
      message: /give path \(a SQLite file\) or url \(PostgreSQL\), not both/,
    },
    {
      name: 'tls without a url',
      state: 'path: ./s.db\n  tls: { reject_unauthorized: false }',
      path: 'state.tls',
      message: /applies to url \(PostgreSQL\) only; there is no url/,
    },
    {
      name: 'a URL that is not postgres://',
      state: `url: https://watchdog:${DB_PASSWORD}@db.example.com/x`,
      path: 'state.url',
      message: /must be a postgres:\/\/ URL .*\(value not shown: it is a secret\)/,
    },
    {
      name: 'a statement timeout out of range',
      state: 'url: ${DATABASE_URL}\n  statement_timeout: 20m',
      path: 'state.statement_timeout',
      message: /must be from 1s to 10m/,
    },
    {
      name: 'a leader lease out of range',
      state: 'url: ${DATABASE_URL}\n  leader: { lease: 1s }',
      path: 'state.leader.lease',
      message: /must be from 2s to 5m/,
    },
    {
      name: 'an unknown TLS key',
      state: 'url: ${DATABASE_URL}\n  tls: { ca: x }',
      path: 'state.tls.ca',
      message: /unknown key "ca"/,
    },
    {
      name: 'a CA file that is not there',
      state: 'url: ${DATABASE_URL}\n  tls: { ca_file: /nonexistent/ca.pem }',
      path: 'state.tls.ca_file',
      message: /\/nonexistent\/ca\.pem does not exist/,
    },
  ])('refuses $name, naming the key and never the URL', ({ state, path: keyPath, message }) => {
    const err = errorOf(`${MINIMAL}state:\n  ${state}\n`);
    expect(
      err.problems.find((p) => p.path === keyPath && message.test(p.message)),
      err.message,
    ).toBeDefined();
    expect(err.message).not.toContain(DB_PASSWORD);
  });
});

describe('state.url while ${DATABASE_URL} is not set', () => {
  const yaml = `${MINIMAL}state:\n  url: \${DATABASE_URL}\n  tls: { reject_unauthorized: true }\n`;
  const write = () => {
    const file = path.join(dir, 'watchdog.yaml');
    fs.writeFileSync(file, yaml);
    return file;
  };

  it('validate checks the rest of the file with a stand-in URL, and names the variable', () => {
    const { config, unset } = loadConfigWithUnset(write(), { DMS_API_TOKEN: TOKEN });
    expect(unset.map((p) => [p.path, p.unsetVariable])).toEqual([['state.url', 'DATABASE_URL']]);
    expect(config.state.tls).toEqual({ reject_unauthorized: true });
  });

  it('a state command needs it: a ConfigError naming it', () => {
    expect(() => loadConfigSection(write(), { DMS_API_TOKEN: TOKEN }, 'state')).toThrow(/state\.url.*DATABASE_URL/s);
  });
});
