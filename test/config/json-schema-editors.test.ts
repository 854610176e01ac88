/**
 * `config.schema.json` as an editor's validator reads it (ajv, the validator behind most JSON and
 * YAML language servers): it takes what `validate` takes, `${VAR}` references included, and one
 * mistake in a channel or a policy gives one error, not one per kind of channel.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/config-json-schema.js';
import { parseConfig } from '../../src/config/load-config.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

// ajv 6 speaks draft-07; the keywords this schema uses mean the same there, so only the
// 2020-12 `$schema` line is left out.
const { $schema: _draft, ...schema } = JSON.parse(fs.readFileSync(path.join(ROOT, 'config.schema.json'), 'utf8'));
const check = new Ajv({ allErrors: true }).compile(schema);

/**
 * What an editor reports for a file: ajv's errors, without its `if` errors, which only repeat at
 * the same place that the chosen kind's `then` failed (language servers show the `then` error).
 */
function editorErrors(yaml: string): { at: string; message: string }[] {
  check(parse(yaml));
  return (check.errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) => ({ at: e.dataPath, message: e.message ?? '' }));
}

/** A file of `lines` (block style: a bare `${` cannot start a value in a flow mapping). */
const file = (...lines: string[]) => `${lines.join('\n')}\n`;

const API = ['api:', '  base_url: https://manage.example.com', '  token: ${DMS_API_TOKEN}'];

/** A file with one email channel, its `smtp` section holding `smtp` besides the host. */
const email = (smtp: string[], extra: string[] = ['from: a@example.com', 'to: [b@example.com]']) =>
  file(
    ...API,
    'notify:',
    '  channels:',
    '    - name: m',
    '      type: email',
    '      smtp:',
    '        host: mail.example.com',
    ...smtp.map((l) => `        ${l}`),
    ...extra.map((l) => `      ${l}`),
  );

const ENV = {
  DMS_API_TOKEN: 'tok',
  DMS_BASE_URL: 'https://manage.example.com',
  DMS_HOST: 'manage.example.com',
  SMTP_PORT: '2525',
  SMTP_SECURE: 'tls',
  SMTP_VERIFY: 'false',
  MAIL_FROM: 'watchdog@example.com',
  RPS: '20',
  LISTEN: '0.0.0.0:9464',
  API_TIMEOUT: '45s',
  RUNS_SCHEDULE: '@hourly',
  SLACK_WEBHOOK_URL: 'https://hooks.example/x',
  X: '0',
};

describe('config.schema.json, as editors read it', () => {
  it('is the schema `deploy-watchdog schema` writes', () => {
    expect(schema).toEqual(Object.fromEntries(Object.entries(configJsonSchema()).filter(([k]) => k !== '$schema')));
  });

  it.each(['config.example.yaml', 'examples/simulator.yaml'])('takes %s', (name) => {
    expect(editorErrors(fs.readFileSync(path.join(ROOT, name), 'utf8'))).toEqual([]);
  });

  // Each value as the documented ${VAR} forms write it: validate takes it once the variable is
  // set, and so must the schema, which cannot know the value.
  it.each([
    ['a URL', file('api:', '  base_url: ${DMS_BASE_URL}', '  token: ${DMS_API_TOKEN}')],
    ['a URL with a reference inside', file('api:', '  base_url: https://${DMS_HOST}', '  token: ${DMS_API_TOKEN}')],
    ['a number', email(['port: ${SMTP_PORT}'])],
    ['a boolean', email(['tls_reject_unauthorized: ${SMTP_VERIFY}'])],
    ['one of a list of words', email(['secure: ${SMTP_SECURE}'])],
    ['an email address', email([], ['from: ${MAIL_FROM}', 'to: [b@example.com]'])],
    ['a number or "off"', file(...API, '  requests_per_second: ${RPS}')],
    ['a duration', file(...API, '  timeout: ${API_TIMEOUT}')],
    ['a listen address', file(...API, 'server:', '  listen: ${LISTEN}')],
    ['a schedule', file(...API, 'jobs:', '  runs: ${RUNS_SCHEDULE}')],
    [
      'a schedule of 6 fields, a macro and "off"',
      file(...API, 'jobs:', '  runs: "0 */5 * * * *"', '  urls: "@daily"', '  backups: "off"'),
    ],
    [
      'a secret URL',
      file(
        ...API,
        'notify:',
        '  channels:',
        '    - name: s',
        '      type: slack',
        '      webhook_url: ${SLACK_WEBHOOK_URL}',
      ),
    ],
  ])('takes ${VAR} for %s, as validate does', (_what, yaml) => {
    expect(() => parseConfig(yaml, ENV, 'x.yaml')).not.toThrow();
    expect(editorErrors(yaml)).toEqual([]);
  });

  it.each([
    ['a number that is text', email(['port: abc'])],
    ['a number with text around a reference', email(['port: 25${X}'])],
    ['a boolean that is text', file(...API, 'alerts:', '  send_resolved: maybe')],
    ['a schedule of 7 fields', file(...API, 'jobs:', '  runs: "0 0 * * * * *"')],
    ['a schedule of 4 fields', file(...API, 'jobs:', '  urls: "*/15 * * *"')],
  ])('still refuses %s, as validate does', (_what, yaml) => {
    expect(() => parseConfig(yaml, ENV, 'x.yaml')).toThrow();
    expect(editorErrors(yaml)).toHaveLength(1);
  });

  // One mistake in one channel (or policy): one error, at that channel, whatever its kind.
  it.each([
    [
      'a Slack channel with a key of the email kind',
      file(
        ...API,
        'notify:',
        '  channels:',
        '    - { name: s, type: slack, webhook_url: "https://h.example/x", to: [a@example.com] }',
      ),
      '.notify.channels[0]',
    ],
    [
      'a kind that does not exist',
      file(...API, 'notify:', '  channels:', '    - { name: s, type: slak, webhook_url: "https://h.example/x" }'),
      '.notify.channels[0].type',
    ],
    ['an email channel without recipients', email([], ['from: a@example.com']), '.notify.channels[0]'],
    ['a port out of range', email(['port: 70000']), '.notify.channels[0].smtp.port'],
    [
      'a retry policy with a backup option',
      file(...API, 'remediation:', '  policies:', '    - { name: p, action: runs.retry, format: zip }'),
      '.remediation.policies[0]',
    ],
  ])('gives one error for %s', (_what, yaml, at) => {
    const errors = editorErrors(yaml);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.at).toBe(at);
  });
});
