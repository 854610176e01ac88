/**
 * Templates per channel kind, as golden files (`golden/`): each kind renders two messages, one
 * alert whose every piece of service text is hostile (markup, `<!channel>`, `@everyone`, HTML, a
 * reordering character, a summary of 12,000 characters), a group of two and one of four (more than
 * a message shows in full: Slack and email list them one line each), once with its default
 * templates (the files in templates/) and once with a custom one using most fields. Besides the
 * files, each render is held to what the kind must never let through: no mention or markup formed
 * from service text, and the kind's length limits.
 *
 * To accept a change, write them again and read the diff:
 *
 *     UPDATE_GOLDEN=1 npx vitest run test/notify/templates/channel-templates.test.ts && git diff test/notify/templates
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import type { Notification, NoticeNotification } from '../../../src/notify/channels/channel.js';
import { DISCORD_TEMPLATE_PARTS } from '../../../src/notify/channels/discord-config.js';
import { DISCORD_LIMITS, DISCORD_TEMPLATES, renderDiscord } from '../../../src/notify/channels/discord.js';
import { emailTemplates, renderEmail } from '../../../src/notify/channels/email.js';
import { OPSGENIE_TEMPLATE_PARTS } from '../../../src/notify/channels/opsgenie-config.js';
import { OPSGENIE_LIMITS, OPSGENIE_TEMPLATES, renderOpsgenie } from '../../../src/notify/channels/opsgenie.js';
import { PAGERDUTY_TEMPLATE_PARTS } from '../../../src/notify/channels/pagerduty-config.js';
import { PAGERDUTY_LIMITS, PAGERDUTY_TEMPLATES, renderPagerDuty } from '../../../src/notify/channels/pagerduty.js';
import { renderLiving } from '../../../src/notify/channels/slack-app-render.js';
import { SLACK_TEMPLATE_PARTS } from '../../../src/notify/channels/slack-config.js';
import { renderSlack, SLACK_TEMPLATES } from '../../../src/notify/channels/slack-render.js';
import { SLACK_LIMITS } from '../../../src/notify/channels/slack-limits.js';
import { TEAMS_TEMPLATE_PARTS } from '../../../src/notify/channels/teams-config.js';
import { renderTeams, TEAMS_TEMPLATES } from '../../../src/notify/channels/teams.js';
import { channelTemplates, type ChannelTemplates } from '../../../src/notify/channels/template-config.js';
import { NOW } from '../../detectors/fixtures.js';
import { CONFIG_FILE, goldenCases, LINKS } from '../golden-cases.js';

const DIR = path.join(import.meta.dirname, 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const CONSOLE = 'https://watchdog.example.com';

/** Service text that tries every medium's tricks at once, and is far too long. */
const HOSTILE_SUMMARY =
  'Update of <b>shop</b> failed <!channel> <!here> @everyone @here <@U123> <@&456> *bold* _it_ ~x~ `code` ' +
  '[click](https://evil.example) <https://evil.example|click> <script>alert(1)</script> &amp; | # 1. \u202Egnp\n' +
  'Bcc: victim@evil.example ' +
  'long '.repeat(2_400);

function hostile(e: AlertEvent): AlertEvent {
  return {
    ...e,
    summary: HOSTILE_SUMMARY,
    labels: { ...e.labels, app: '<!channel> @everyone *shop*', project: '<img src=x onerror=alert(1)>' },
    facts: [...(e.facts ?? []), { label: 'Reason', value: '<@U999> **x** [y](https://evil.example)' }],
  };
}

/** A notice whose every piece is service text at its most hostile: the title, a fact, a line, a link. */
const HOSTILE_NOTICE: NoticeNotification = {
  type: 'notice',
  topic: 'remediation',
  title: `Retry of ${HOSTILE_SUMMARY.slice(0, 400)}`,
  severity: 'warning',
  fields: [
    { label: 'App', value: '<!channel> @everyone *shop*' },
    { label: 'Reason', value: '<@U999> **x** [y](https://evil.example) <script>alert(1)</script>' },
  ],
  lines: ['<https://evil.example|click> @here \u202Egnp', 'Bcc: victim@evil.example'],
  url: 'javascript:alert(1)',
};

/** A notice as the daily digest sends one: no severity, facts, lines and a link. */
const PLAIN_NOTICE: NoticeNotification = {
  type: 'notice',
  topic: 'digest',
  title: 'Daily digest',
  fields: [
    { label: 'Open', value: '3' },
    { label: 'Opened', value: '5' },
  ],
  lines: ['2 held by silence #4 (planned maintenance)', '1 remediation: run #5981 retried, succeeded'],
  url: 'https://watchdog.example.com/',
};

/** The messages every kind renders: two alerts messages and two notices. */
function cases(only?: Notification['type']): { name: string; n: Notification }[] {
  const all = goldenCases();
  const one = all.find((c) => c.name === 'failed-run')!.notification;
  const resolved = all.find((c) => c.name === 'resolved-with-reason')!.notification;
  return [
    { name: 'hostile', n: { ...one, events: one.events.map(hostile) } },
    {
      name: 'two',
      n: {
        ...one,
        events: [
          { ...one.events[0]!, id: 90, fingerprint: 'failed_runs/run/1' },
          { ...resolved.events[0]!, id: 91, fingerprint: 'failed_runs/run/2' },
        ],
      },
    },
    {
      // More than COMPACT_OVER: Slack and email list them one line each (a custom text on one line).
      name: 'four',
      n: {
        ...one,
        events: [0, 1, 2, 3].map((k) => ({
          ...(k === 1 ? hostile(one.events[0]!) : (k === 3 ? resolved : one).events[0]!),
          id: 80 + k,
          fingerprint: `failed_runs/run/${80 + k}`,
          labels: { ...(k === 3 ? resolved : one).events[0]!.labels, app: `app-${k}` },
        })),
      },
    },
    { name: 'notice-hostile', n: HOSTILE_NOTICE },
    { name: 'notice-plain', n: PLAIN_NOTICE },
  ].filter((c) => only === undefined || c.n.type === only);
}

/** Custom templates per medium: most fields, sections, lists and the position flags. */
const CUSTOM = {
  title:
    '{{tone_word}} [{{group.environment_type}}] {{counts}}{{#about}} for {{about}}{{/about}} via {{channel}} ' +
    '({{alert_count}} shown, {{omitted}} more): {{#events}}{{app}}{{^last}} + {{/last}}{{/events}}',
  text:
    '{{emoji}} {{kind}}/{{severity}} {{app}} in {{labels.project}} since {{since}}{{#ago}} ({{.}} ago){{/ago}}\n' +
    '{{summary}}\n' +
    '{{#facts}}{{label}}={{value}}{{^last}}; {{/last}}{{/facts}}\n' +
    '{{#resolved}}over: {{resolution}}{{/resolved}}{{#page_url}}page: {{page_url}}{{/page_url}} {{url}}\n' +
    '{{#next_steps}}next: {{.}}{{/next_steps}}',
  html: '<i>{{status}}</i> <b>{{app}}</b>: {{summary}} <a href="{{page_url}}">{{page_label}}</a>',
  notice_title:
    '{{emoji}} {{tone_word}}{{#severity}} ({{.}}){{/severity}} [{{topic}}] {{title}} via {{channel}}: ' +
    '{{#fields}}{{label}}={{value}}{{^last}}, {{/last}}{{/fields}}{{#lines}} / {{.}}{{/lines}}{{#url}} <{{.}}>{{/url}}',
};

/** The custom templates for a kind's parts (an alert-scoped title where the kind renders one alert at a time). */
function custom(parts: object, eventTitle = false): ChannelTemplates {
  const given: Record<string, string> = {};
  for (const part of Object.keys(parts) as (keyof typeof CUSTOM)[]) given[part] = CUSTOM[part];
  if (eventTitle) given.title = '{{tone_word}} {{check}} on {{app}} ({{labels.environment_type}}): {{brief}}';
  return channelTemplates({}, parts, given);
}

function expectGolden(name: string, actual: string): void {
  const file = path.join(DIR, name);
  if (UPDATE) {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(file, actual);
    return;
  }
  expect(fs.existsSync(file), `${name} is missing: UPDATE_GOLDEN=1 to write it`).toBe(true);
  expect(actual, `${name} differs (UPDATE_GOLDEN=1 to accept, then read the diff)`).toBe(fs.readFileSync(file, 'utf8'));
}

const json = (m: unknown) => `${JSON.stringify(m, null, 2)}\n`;

/** Every string in a payload, for what must never be in any. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

/** Each kind: its render with some templates (undefined: its defaults), as a golden file, and its checks. */
const KINDS: {
  kind: string;
  templates: ChannelTemplates;
  render: (n: Notification, t: ChannelTemplates | undefined) => string;
  safe: (out: string) => void;
}[] = [
  {
    kind: 'slack',
    templates: custom(SLACK_TEMPLATE_PARTS),
    render: (n, templates) =>
      json(
        renderSlack(n, { now: NOW, channelName: 'ops-slack', commandConfigFile: CONFIG_FILE, links: LINKS, templates }),
      ),
    safe: (out) => {
      const m = JSON.parse(out) as ReturnType<typeof renderSlack>;
      // The header is plain_text, where Slack forms no mention: the rest is mrkdwn.
      expect(m.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text' } });
      for (const s of [m.text, ...strings(m.blocks.slice(1))])
        expect(s).not.toMatch(/<!channel>|<!here>|<@U|<script|<https:\/\/evil/);
      expect((m.blocks[0] as { text: { text: string } }).text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.header);
      expect(m.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
      for (const b of m.blocks)
        if ('text' in b && b.text.type === 'mrkdwn') expect(b.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    },
  },
  {
    kind: 'slack_app',
    templates: custom(SLACK_TEMPLATE_PARTS),
    // A notice is the Slack message it is in either kind; alerts are the app's living message.
    render: (n, templates) =>
      json(
        n.type === 'notice'
          ? renderSlack(n, { now: NOW, channelName: 'ops-app', links: LINKS, templates })
          : renderLiving({ group: n.group, alerts: n.events, notes: [], routes: n.routes ?? [] }, 10, {
              now: NOW,
              channelName: 'ops-app',
              links: LINKS,
              templates,
            }),
      ),
    safe: (out) => {
      const m = JSON.parse(out) as ReturnType<typeof renderLiving>;
      expect(m.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text' } });
      for (const s of [m.text, ...strings(m.attachments), ...strings(m.blocks.slice(1))])
        expect(s).not.toMatch(/<!channel>|<!here>|<@U|<script/);
    },
  },
  {
    kind: 'email',
    templates: emailTemplates(CUSTOM),
    render: (n, templates) => {
      const m = renderEmail(n, {
        now: NOW,
        channelName: 'ops-mail',
        subject_prefix: '[deploy-watchdog]',
        commandConfigFile: CONFIG_FILE,
        links: LINKS,
        templates,
      });
      return `Subject: ${m.subject}\n\n${m.text}\n\n--- html ---\n${m.html}`;
    },
    safe: (out) => {
      const [head, html] = out.split('--- html ---');
      expect(head!.split('\n')[0]!.length).toBeLessThanOrEqual(9 + 200);
      expect(html).not.toMatch(/<script|<img|<!channel/);
    },
  },
  {
    kind: 'email-text-only',
    // A text without an html: the HTML part shows it as the plain text it is.
    templates: emailTemplates({ text: 'Look <here>: {{summary}}\nthen act' }),
    render: (n, templates) =>
      renderEmail(n, { now: NOW, channelName: 'ops-mail', subject_prefix: '[dw]', links: LINKS, templates }).html,
    safe: (out) => {
      expect(out).not.toMatch(/<here>|<script|<img/);
    },
  },
  {
    kind: 'teams',
    templates: custom(TEAMS_TEMPLATE_PARTS),
    render: (n, templates) =>
      json(
        renderTeams(n, {
          now: NOW,
          channelName: 'ops-teams',
          commandConfigFile: CONFIG_FILE,
          links: LINKS,
          consoleUrl: CONSOLE,
          templates,
        }),
      ),
    safe: (out) => {
      expect(out.length).toBeLessThan(28_000);
      for (const s of strings(JSON.parse(out))) expect(s).not.toMatch(/(?<!\\)<(?:at|script|img)|(?<!\\)\[click\]/);
    },
  },
  {
    kind: 'discord',
    templates: custom(DISCORD_TEMPLATE_PARTS),
    render: (n, templates) =>
      json(
        renderDiscord(n, {
          now: NOW,
          channelName: 'ops-discord',
          commandConfigFile: CONFIG_FILE,
          links: LINKS,
          consoleUrl: CONSOLE,
          templates,
        }),
      ),
    safe: (out) => {
      const m = JSON.parse(out) as ReturnType<typeof renderDiscord>;
      expect(m.allowed_mentions).toEqual({ parse: [] });
      // A code span (the silence command) is shown as written: Discord forms no mention there.
      for (const s of strings(m)) expect(s.replace(/`[^`]*`/g, '')).not.toMatch(/(?<!\\)@(?:everyone|here)|(?<!\\)<@/);
      expect(m.content.length).toBeLessThanOrEqual(DISCORD_LIMITS.content);
      const total = m.embeds.reduce(
        (t, e) => t + e.title.length + (e.description?.length ?? 0) + (e.footer?.text.length ?? 0),
        0,
      );
      expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.embedTotal);
      for (const e of m.embeds) expect(e.description?.length ?? 0).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    },
  },
  {
    kind: 'pagerduty',
    templates: custom(PAGERDUTY_TEMPLATE_PARTS, true),
    render: (n, templates) =>
      json(
        renderPagerDuty(n, {
          now: NOW,
          links: LINKS,
          consoleUrl: CONSOLE,
          source: 'deploy-watchdog',
          channelName: 'ops-pager',
          templates,
        }),
      ),
    safe: (out) => {
      for (const r of JSON.parse(out) as ReturnType<typeof renderPagerDuty>) {
        const summary = 'payload' in r.request.event ? r.request.event.payload?.summary : undefined;
        if (summary) {
          expect(summary.length).toBeLessThanOrEqual(PAGERDUTY_LIMITS.summary);
          expect(summary).not.toMatch(/[\n\r\u202e]/);
        }
      }
    },
  },
  {
    kind: 'opsgenie',
    templates: custom(OPSGENIE_TEMPLATE_PARTS, true),
    render: (n, templates) =>
      json(
        renderOpsgenie(n, {
          now: NOW,
          links: LINKS,
          consoleUrl: CONSOLE,
          tags: ['dw'],
          channelName: 'ops-genie',
          templates,
        }),
      ),
    safe: (out) => {
      for (const r of JSON.parse(out) as ReturnType<typeof renderOpsgenie>) {
        const { message, description } = r.request.body as { message?: string; description?: string };
        if (message !== undefined) expect(message.length).toBeLessThanOrEqual(OPSGENIE_LIMITS.message);
        if (description !== undefined) expect(description.length).toBeLessThanOrEqual(OPSGENIE_LIMITS.description);
        for (const s of [message, description]) expect(s ?? '').not.toContain('\u202e');
      }
    },
  },
];

// email-text-only is about an alert's text in the HTML part: a notice there is the email's, already written.
const ROWS = KINDS.flatMap((k) =>
  cases(k.kind === 'email-text-only' ? 'alerts' : undefined).flatMap((c) =>
    (['default', 'custom'] as const).map((which) => [`${k.kind}.${c.name}.${which}`, k, c.n, which] as const),
  ),
);

describe('templates per channel kind, as golden files', () => {
  it.each(ROWS)('%s', (name, k, n, which) => {
    const out = k.render(n, which === 'custom' ? k.templates : undefined);
    expectGolden(`${name}${k.kind === 'email' ? '.txt' : k.kind === 'email-text-only' ? '.html' : '.json'}`, out);
    k.safe(out);
  });

  it('lists more alerts than a message shows in full by the channel’s own text template, one line each', () => {
    const four = cases('alerts').find((c) => c.name === 'four')!.n;
    const slackLines = (t: ChannelTemplates | undefined) =>
      renderSlack(four, { now: NOW, channelName: 'ops-slack', links: LINKS, templates: t })
        .blocks.flatMap((b) => ('text' in b && b.text.type === 'mrkdwn' ? b.text.text.split('\n') : []))
        .filter((l) => /app-\d/.test(l));
    const own = slackLines(custom(SLACK_TEMPLATE_PARTS));
    expect(own.map((l) => /^(?:🔴|✅) (firing|resolved)\/critical (app-\d) in shop/.exec(l)?.slice(1))).toEqual([
      ['firing', 'app-0'],
      ['firing', 'app-1'],
      ['firing', 'app-2'],
      ['resolved', 'app-3'],
    ]);
    // The built-in lines with the default templates: the app linked, then what went wrong.
    expect(slackLines(undefined).join('\n')).toMatch(/<https:\/\/[^|]+\|app-0> · /);
    const mail = renderEmail(four, {
      now: NOW,
      channelName: 'ops-mail',
      subject_prefix: '[dw]',
      links: LINKS,
      templates: emailTemplates({ text: '{{tone_word}}: {{app}}\n{{summary}}' }),
    });
    expect(mail.text.split('\n').filter((l) => l.startsWith('- '))).toEqual([
      expect.stringMatching(/^- CRITICAL: app-0 Update of shop-prod/),
      expect.stringMatching(/^- CRITICAL: app-1 Update of <b>shop<\/b>/),
      expect.stringMatching(/^- CRITICAL: app-2 Update of shop-prod/),
      expect.stringMatching(/^- RESOLVED: app-3 /),
    ]);
    // The HTML part shows that text as the plain text it is, an item each.
    expect(mail.html).toContain('<li>CRITICAL: app-1<br>\nUpdate of &lt;b&gt;shop&lt;/b&gt;');
  });

  it("offers each alert's console page to Slack's and email's templates too, as the other kinds link it", () => {
    const two = cases('alerts').find((c) => c.name === 'two')!.n;
    if (two.type !== 'alerts') throw new Error('an alerts case');
    const page = (i: number) => `${CONSOLE}/alert?fp=${encodeURIComponent(two.events[i]!.fingerprint)}`;
    const o = { now: NOW, links: LINKS, consoleUrl: CONSOLE };
    const slack = renderSlack(two, {
      ...o,
      channelName: 'ops-slack',
      templates: channelTemplates({}, SLACK_TEMPLATE_PARTS, { text: '<{{console_url}}|{{app}}>' }),
    });
    const mail = renderEmail(two, {
      ...o,
      channelName: 'ops-mail',
      subject_prefix: '[dw]',
      templates: emailTemplates({ text: 'Console: {{console_url}}', html: '<a href="{{console_url}}">{{app}}</a>' }),
    });
    for (const i of [0, 1]) {
      expect(JSON.stringify(slack.blocks)).toContain(page(i).replace(/&/g, '&amp;'));
      expect(mail.text).toContain(`Console: ${page(i)}`);
      expect(mail.html).toContain(`href="${page(i).replace(/&/g, '&amp;')}"`);
    }
  });

  it('renders the defaults with the files in templates/ (what a user copies)', () => {
    const file = (p: string) => fs.readFileSync(path.join(import.meta.dirname, '../../../templates', p), 'utf8');
    expect(SLACK_TEMPLATES.title!.source).toBe(file('slack/title.mustache'));
    expect(TEAMS_TEMPLATES.text!.source).toBe(file('teams/text.mustache'));
    expect(DISCORD_TEMPLATES.title!.source).toBe(file('discord/title.mustache'));
    expect(PAGERDUTY_TEMPLATES.title!.source).toBe(file('pagerduty/title.mustache'));
    expect(OPSGENIE_TEMPLATES.text!.source).toBe(file('opsgenie/text.mustache'));
    expect(emailTemplates(undefined).html!.source).toBe(file('email/html.mustache'));
    for (const [kind, templates] of [
      ['slack', SLACK_TEMPLATES],
      ['email', emailTemplates(undefined)],
      ['teams', TEAMS_TEMPLATES],
      ['discord', DISCORD_TEMPLATES],
      ['pagerduty', PAGERDUTY_TEMPLATES],
      ['opsgenie', OPSGENIE_TEMPLATES],
    ] as const)
      expect(templates.notice_title!.source).toBe(file(`${kind}/notice_title.mustache`));
  });

  it.skipIf(UPDATE)('has no golden file that no case writes', () => {
    const written = ROWS.map(
      ([name, k]) => `${name}${k.kind === 'email' ? '.txt' : k.kind === 'email-text-only' ? '.html' : '.json'}`,
    );
    expect(fs.readdirSync(DIR).sort()).toEqual(written.sort());
  });
});
