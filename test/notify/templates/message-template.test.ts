/**
 * The template engine as the channels use it: every value goes through the channel's escaper and
 * the template's own words do not; no name reaches past a view's own data (a label named like an
 * Object method finds nothing); lists, sections and the position flags; a text used as HTML.
 */
import { describe, expect, it } from 'vitest';
import { escapeHtmlLines, escapeMrkdwn } from '../../../src/notify/channels/escape.js';
import {
  compileTemplate,
  isTemplateProblem,
  type CompiledTemplate,
  type TemplateScope,
} from '../../../src/notify/channels/message-template.js';

function compiled(source: string, scope: TemplateScope = 'message'): CompiledTemplate {
  const t = compileTemplate(source, scope);
  if (isTemplateProblem(t)) throw new Error(t.message);
  return t;
}

/** A view as `template-view.ts` makes one: labels without a prototype. */
function labels(values: Record<string, string>): Record<string, string> {
  return Object.assign(Object.create(null) as Record<string, string>, values);
}

const MESSAGE = {
  headline: '<!channel> & <b>',
  alert_count: 2,
  group: labels({ check: 'failed_runs' }),
  next_steps: ['Retry <it>', 'Call @here'],
  events: [
    { app: 'a', first: true, last: false, labels: labels({}) },
    { app: 'b', first: false, last: true, labels: labels({}) },
  ],
};

describe('rendering a template', () => {
  it.each([
    [
      'every value escaped, the template’s own words kept',
      '*Alert* <{{headline}}>',
      '*Alert* <&lt;!channel&gt; &amp; &lt;b&gt;>',
    ],
    ['a number', '{{alert_count}} alerts', '2 alerts'],
    ['a label', '{{group.check}}', 'failed_runs'],
    [
      'a label named like an Object method: nothing',
      '[{{group.constructor}}{{group.toString}}{{group.__proto__}}]',
      '[]',
    ],
    ['a list with separators', '{{#events}}{{app}}{{^last}}, {{/last}}{{/events}}', 'a, b'],
    ['a list of text', '{{#next_steps}}- {{.}}\n{{/next_steps}}', '- Retry &lt;it&gt;\n- Call @here'],
    ['an inverted section of an empty value', '{{^group.app}}no app{{/group.app}}', 'no app'],
    ['blank lines before, whitespace after: dropped', '\n\n  {{alert_count}}  \n\n', '  2'],
  ])('%s', (_what, source, expected) => {
    expect(compiled(source).render([MESSAGE], (v) => escapeMrkdwn(v, 100))).toBe(expected);
  });

  it('looks a name up from the alert outwards to its message', () => {
    const t = compiled('{{app}} of {{alert_count}}: {{headline}}', 'event');
    expect(t.render([MESSAGE, MESSAGE.events[1]!], (v) => v)).toBe('b of 2: <!channel> & <b>');
  });

  it('cuts every value by the escaper', () => {
    expect(compiled('{{headline}}!').render([{ headline: 'x'.repeat(50) }], (v) => escapeMrkdwn(v, 10))).toBe(
      `${'x'.repeat(9)}…!`,
    );
  });

  it('uses a text as HTML with its own words escaped too, its lines kept', () => {
    const t = compiled('Look <here>:\n{{headline}}').withLiteral((s) => escapeHtmlLines(s).replace(/\n/g, '<br>\n'));
    expect(t.render([MESSAGE], (v) => escapeHtmlLines(v))).toBe(
      'Look &lt;here&gt;:<br>\n&lt;!channel&gt; &amp; &lt;b&gt;',
    );
  });
});
