/**
 * A channel's template at load: `validate` and `loadConfig` (which start and SIGHUP use) refuse a
 * template that does not parse, names an unknown field, prints a value unescaped or asks for a
 * partial, naming the channel, the key's line in the config and the position in the template; a
 * template file is read relative to the config, and its text is what the channel gets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfig, parseConfig } from '../../../src/config/load-config.js';
import { compileTemplate, isTemplateProblem } from '../../../src/notify/channels/message-template.js';
import { runCli, writeConfig } from '../../helpers/cli-harness.js';

const ENV = { DMS_API_TOKEN: 'dms-token-1', SLACK_WEBHOOK_URL: 'https://hooks.slack.example/services/T/B/x' };

/** A config with one Slack channel whose `template` is `template` (YAML lines under it, indented). */
function configWith(template: string, type = 'slack', extra = 'webhook_url: ${SLACK_WEBHOOK_URL}'): string {
  return `api:
  base_url: https://manage.example.com
  token: \${DMS_API_TOKEN}
notify:
  channels:
    - name: ops-slack
      type: ${type}
      ${extra}
      template:
${template
  .split('\n')
  .map((l) => `        ${l}`)
  .join('\n')}
`;
}

function problemsOf(text: string): ConfigError['problems'] {
  try {
    parseConfig(text, ENV, 'x.yaml', { baseDir: dir });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-templates-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a bad template is refused at load, naming the channel and the position', () => {
  it.each([
    {
      what: 'an unknown field',
      template: 'title: "{{tone_word}} {{sumary}}"',
      path: 'notify.channels[0].template.title',
      message: 'channel "ops-slack": template title unknown field "sumary" at line 1, column 15',
    },
    {
      what: 'an alert field in a title, outside {{#events}}',
      template: 'title: "{{summary}}"',
      path: 'notify.channels[0].template.title',
      message: 'channel "ops-slack": template title unknown field "summary" at line 1, column 1',
    },
    {
      what: 'an unclosed section, on its second line',
      template: 'text: "{{status}}\\n{{#facts}}{{label}}"',
      path: 'notify.channels[0].template.text',
      message: /^channel "ops-slack": template text does not parse: unclosed section "facts" at line 2, column \d+$/,
    },
    {
      what: 'an unclosed tag',
      template: 'text: "{{status"',
      path: 'notify.channels[0].template.text',
      message: /template text does not parse: unclosed tag/,
    },
    {
      what: 'a value printed unescaped',
      template: 'text: "{{{summary}}}"',
      path: 'notify.channels[0].template.text',
      message: /print a value unescaped, which is refused: write \{\{summary\}\} at line 1, column 1$/,
    },
    {
      what: 'a partial',
      template: 'text: "{{> other}}"',
      path: 'notify.channels[0].template.text',
      message: /partials \(\{\{>other\}\}\) are not supported: a template is one text at line 1, column 1$/,
    },
    {
      what: 'a list printed as a value',
      template: 'title: "{{events}}"',
      path: 'notify.channels[0].template.title',
      message: /"events" is a list: open it with \{\{#events\}\}/,
    },
    {
      what: "an alert's field in a notice's title",
      template: 'notice_title: "{{title}}: {{summary}}"',
      path: 'notify.channels[0].template.notice_title',
      message: 'channel "ops-slack": template notice_title unknown field "summary" at line 1, column 12',
    },
    {
      what: "a notice's title printing a value unescaped",
      template: 'notice_title: "{{emoji}}\\n{{&title}}"',
      path: 'notify.channels[0].template.notice_title',
      message:
        /template notice_title .*print a value unescaped, which is refused: write \{\{title\}\} at line 2, column 1$/,
    },
    {
      what: 'an unknown field of a label-less object',
      template: 'text: "{{#facts}}{{lable}}{{/facts}}"',
      path: 'notify.channels[0].template.text',
      message: /unknown field "lable" at line 1, column 11/,
    },
  ])('$what', ({ template, path: at, message }) => {
    const problems = problemsOf(configWith(template));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe(at);
    expect(problems[0]!.line).toBe(10);
    expect(problems[0]!.message).toMatch(message);
  });

  it('names a file, its path and the position in it', () => {
    fs.writeFileSync(path.join(dir, 'text.mustache'), '{{! mine }}\n{{status}} · {{app}}\n{{#labels}}{{/labels}}\n');
    const problems = problemsOf(configWith('text_file: text.mustache'));
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      [
        'notify.channels[0].template.text_file',
        `channel "ops-slack": template text (${path.join(dir, 'text.mustache')}) "labels" holds labels by name: use {{labels.<label>}} at line 3, column 1`,
      ],
    ]);
  });

  it('says a template file that does not exist', () => {
    const problems = problemsOf(configWith('title_file: nowhere.mustache'));
    expect(problems[0]!.message).toBe(
      `channel "ops-slack": template file ${path.join(dir, 'nowhere.mustache')} does not exist`,
    );
  });

  it.each([
    ['a part the kind does not take (PagerDuty has no text)', 'text: "{{summary}}"', 'pagerduty', /unknown key "text"/],
    ['a part given twice', 'title: "x"\ntitle_file: t.mustache', 'slack', /give title or title_file, not both/],
  ])('refuses %s', (_what, template, type, message) => {
    const extra = type === 'pagerduty' ? 'routing_key: 0123456789abcdef0123456789abcdef' : undefined;
    fs.writeFileSync(path.join(dir, 't.mustache'), 'x');
    const problems = problemsOf(configWith(template, type, extra));
    expect(problems.map((p) => p.message).join('\n')).toMatch(message);
  });

  it('is said by validate, which exits 2', async () => {
    const file = writeConfig(dir, configWith('title: "{{emoji}} {{headlin}}"'));
    const { code, stdout, stderr } = await runCli(['validate', '--config', file], { env: ENV });
    expect(code).toBe(2);
    expect(`${stdout}${stderr}`).toContain(
      `${file}:10 notify.channels[0].template.title: channel "ops-slack": template title unknown field "headlin" at line 1, column 11`,
    );
  });
});

describe('a good template at load', () => {
  it('reads a file relative to the config, as text the channel gets (a reload reads it anew)', () => {
    fs.writeFileSync(path.join(dir, 'title.mustache'), '{{tone_word}} on {{group.environment_type}}\n');
    const file = writeConfig(dir, configWith('title_file: title.mustache\ntext: "{{summary}}"'));
    const channel = loadConfig(file, ENV).notify.channels[0] as { template?: Record<string, string> };
    expect(channel.template).toEqual({ title: '{{tone_word}} on {{group.environment_type}}\n', text: '{{summary}}' });
    fs.writeFileSync(path.join(dir, 'title.mustache'), '{{emoji}}');
    const again = loadConfig(file, ENV).notify.channels[0] as { template?: Record<string, string> };
    expect(again.template?.title).toBe('{{emoji}}');
  });

  it.each([
    [
      'every field of an alert, inside its message',
      'event',
      '{{channel}} {{headline}} {{kind}} {{labels.app}} {{#facts}}{{label}}{{^last}}, {{/last}}{{/facts}}',
    ],
    ['a list of text', 'message', '{{#next_steps}}- {{.}}{{/next_steps}}'],
    ['alerts in a title', 'message', '{{#events}}{{app}}{{^last}}, {{/last}}{{/events}}'],
    ['a section on a value, and set delimiters', 'event', '{{#app}}app {{.}}{{/app}}{{=<% %>=}}<% summary %>'],
    ['a comment', 'message', '{{! anything at all }}{{emoji}}'],
    [
      'every field of a notice',
      'notice',
      '{{topic}} {{title}} {{severity}} {{tone}} {{tone_word}} {{emoji}} {{url}} {{channel}} ' +
        '{{#fields}}{{label}}={{value}}{{^last}}, {{/last}}{{/fields}}{{#lines}}{{.}}{{/lines}}',
    ],
  ] as const)('accepts %s', (_what, scope, source) => {
    expect(isTemplateProblem(compileTemplate(source, scope))).toBe(false);
  });
});
