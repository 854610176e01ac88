import { describe, expect, it } from 'vitest';
import type { NoticeNotification } from '../../../src/notify/channels/channel.js';
import { renderSlack, SLACK_LIMITS, type SlackMessage } from '../../../src/notify/channels/slack.js';
import { alertEvent, alerts, NOW } from './fixtures.js';

const options = { now: NOW, channelName: 'ops-slack' };

/** Every mrkdwn text of a message: the fallback, sections, fields, context lines. */
function mrkdwnTexts(m: SlackMessage): string[] {
  const out = [m.text];
  for (const b of m.blocks) {
    if (b.type === 'section' && 'text' in b) out.push(b.text.text);
    if (b.type === 'section' && 'fields' in b) out.push(...b.fields.map((f) => f.text));
    if (b.type === 'context') out.push(...b.elements.map((e) => e.text));
  }
  return out;
}

function headerText(m: SlackMessage): string {
  const h = m.blocks[0];
  if (h?.type !== 'header') throw new Error('first block is not a header');
  return h.text.text;
}

/**
 * Every `<…>` token Slack would interpret must be one we built: a date token or a link to an
 * http(s) URL whose target holds no `|`, `<` or `>`. Anything else is an injection.
 */
function foreignTokens(text: string): string[] {
  const tokens = text.match(/<[^>]*>/g) ?? [];
  return tokens.filter(
    (t) => !/^<!date\^\d+\^\{date_short_pretty\} \{time\}\|[^<>|]*>$/.test(t) && !/^<https?:\/\/[^\s<>|]+\|[^<>]*>$/.test(t),
  );
}

describe('renderSlack: alerts', () => {
  it('shows severity, count, what and where in the header, and the facts per event', () => {
    const m = renderSlack(alerts([alertEvent(), alertEvent({ id: 2, severity: 'warning' }), alertEvent({ id: 3 })]), options);
    expect(headerText(m)).toBe('🔴 CRITICAL · 3 failed runs · production');
    expect(m.text).toContain('🔴 CRITICAL · 3 failed runs · production');
    const first = mrkdwnTexts(m)[1] as string;
    expect(first).toContain('🔴 *CRITICAL* · Update of shop (production) failed at step install');
    expect(first).toContain('*App:* <https://shop.example.com/|shop>');
    expect(first).toContain('*Environment:* production');
    expect(first).toContain('*Project:* webshop');
    expect(first).toContain('*Namespace:* acme');
    expect(first).toContain('*Step:* install');
    expect(first).toContain('*Reason:* exit code 1');
    expect(first).toContain(`<!date^${Date.parse('2026-11-01T10:00:00Z') / 1000}^{date_short_pretty} {time}|2026-11-01 10:00 UTC> (2h ago)`);
    expect(m.blocks.at(-1)).toEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: 'deploy-watchdog · ops-slack' }] });
  });

  it.each([
    ['warning', '🟠 WARNING · 1 failed run · production'],
    ['info', '🔵 INFO · 1 failed run · production'],
    ['critical', '🔴 CRITICAL · 1 failed run · production'],
  ] as const)('a single %s event reads %s', (severity, header) => {
    expect(headerText(renderSlack(alerts([alertEvent({ severity })]), options))).toBe(header);
  });

  it('says RESOLVED with how long it lasted', () => {
    const m = renderSlack(alerts([alertEvent({ kind: 'resolved', endsAt: '2026-11-01T11:42:00Z' })]), options);
    expect(headerText(m)).toBe('✅ RESOLVED · 1 failed run · production');
    expect(mrkdwnTexts(m)[1]).toContain('✅ *RESOLVED after 1h 42m* · Update of shop');
  });

  it('uses the worst firing severity when resolved and firing events mix, and counts the resolved', () => {
    const m = renderSlack(
      alerts([alertEvent({ kind: 'resolved', endsAt: '2026-11-01T11:00:00Z' }), alertEvent({ id: 2, severity: 'warning' })]),
      options,
    );
    expect(headerText(m)).toBe('🟠 WARNING · 2 failed runs · production');
    expect(m.blocks.at(-1)).toEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: 'deploy-watchdog · ops-slack · 1 resolved' }] });
  });

  it.each([
    ['escalated', '🔴 *ESCALATED to CRITICAL*'],
    ['repeat', '🔴 *CRITICAL · still firing*'],
  ] as const)('a %s event says %s', (kind, status) => {
    expect(mrkdwnTexts(renderSlack(alerts([alertEvent({ kind })]), options))[1]).toContain(status);
  });

  it('shows "and N more" for omitted events and for events beyond max_items', () => {
    const events = Array.from({ length: 5 }, (_, i) => alertEvent({ id: i + 1 }));
    const m = renderSlack(alerts(events, 4), { ...options, maxItems: 2 });
    expect(headerText(m)).toBe('🔴 CRITICAL · 9 failed runs · production');
    expect(m.blocks.filter((b) => b.type === 'section')).toHaveLength(2);
    expect(mrkdwnTexts(m)).toContain('…and 7 more not shown');
  });

  it('stays within 50 blocks with the largest max_items', () => {
    const events = Array.from({ length: 60 }, (_, i) => alertEvent({ id: i + 1 }));
    const m = renderSlack(alerts(events), { ...options, maxItems: 99 });
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(mrkdwnTexts(m)).toContain('…and 40 more not shown');
  });

  it('adds the configured mention to critical messages only', () => {
    const mention = { critical: '<!here>' };
    const critical = renderSlack(alerts([alertEvent()]), { ...options, mention });
    expect(critical.text.startsWith('<!here> ')).toBe(true);
    expect(critical.blocks[1]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: '<!here>' } });
    const warning = renderSlack(alerts([alertEvent({ severity: 'warning' })]), { ...options, mention });
    expect(mrkdwnTexts(warning).some((t) => t.includes('<!here>'))).toBe(false);
  });

  it('cuts long values and the header to Slack limits', () => {
    const long = 'x'.repeat(5000);
    const m = renderSlack(
      {
        type: 'alerts',
        group: { check: 'failed_runs', environment_type: long },
        events: [alertEvent({ summary: long, labels: { check: 'failed_runs', app: long }, details: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i}`, long])) })],
        omitted: 0,
      },
      options,
    );
    expect(headerText(m).length).toBeLessThanOrEqual(SLACK_LIMITS.header);
    expect(headerText(m).endsWith('…')).toBe(true);
    for (const t of mrkdwnTexts(m)) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(mrkdwnTexts(m)[1]).toMatch(/\n…$/);
  });
});

describe('renderSlack: injection attempts', () => {
  const attacks = ['<!channel>', '<!here>', '<@U123>', '<https://evil.example|click>', '&amp;', '<!subteam^S123>', '<#C123>'];

  it.each(attacks)('%s in an app name, summary, detail, label and group never survives', (attack) => {
    const event = alertEvent({
      summary: `Update of ${attack} failed`,
      details: { reason: attack, [attack]: 'key too' },
      labels: { check: 'failed_runs', app: attack, namespace: attack, project: attack, environment_type: attack },
    });
    const m = renderSlack({ type: 'alerts', group: { check: 'failed_runs', environment_type: attack }, events: [event], omitted: 0 }, options);
    // What Slack shows as the literal text: the attack with its three characters as entities.
    const shownLiterally = attack.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const texts = mrkdwnTexts(m);
    expect(texts.join('\n')).toContain(shownLiterally);
    for (const text of texts) {
      expect(foreignTokens(text)).toEqual([]);
      expect(text.split(shownLiterally).join('')).not.toContain(attack);
    }
  });

  it.each([
    ['https://evil.example|click', null],
    ['javascript:alert(1)', null],
    ['https://shop.example.com/<!channel>', '<https://shop.example.com/%3C!channel%3E|shop>'],
    ['https://shop.example.com/a|<https://evil.example|click>', '<https://shop.example.com/a%7C%3Chttps://evil.example%7Cclick%3E|shop>'],
  ])('URL %s is linked only when safe', (url, link) => {
    const m = renderSlack(alerts([alertEvent({ url })]), options);
    const text = mrkdwnTexts(m)[1] as string;
    expect(foreignTokens(text)).toEqual([]);
    if (link) expect(text).toContain(`*App:* ${link}`);
    else expect(text).toContain('*App:* shop');
  });

  it('escapes notices too', () => {
    const notice: NoticeNotification = {
      type: 'notice',
      topic: 'remediation',
      title: 'Retry of <!channel> started',
      severity: 'info',
      fields: [{ label: '<@U123>', value: '<https://evil.example|click>' }],
      lines: ['<!here> please look'],
      url: 'javascript:alert(1)',
    };
    const m = renderSlack(notice, options);
    for (const text of mrkdwnTexts(m)) expect(foreignTokens(text)).toEqual([]);
    // Header text is plain_text: Slack shows it literally, so it is only cut, not escaped.
    expect(headerText(m)).toBe('🔵 INFO · Retry of <!channel> started');
  });
});

describe('renderSlack: notices', () => {
  it('renders header, fields, lines, link and topic', () => {
    const m = renderSlack(
      {
        type: 'notice',
        topic: 'test',
        title: 'Test message from deploy-watchdog',
        severity: 'ok',
        fields: [
          { label: 'Channel', value: 'ops-slack' },
          { label: 'Config', value: '/etc/watchdog.yaml' },
        ],
        lines: ['If you can read this, the channel works.'],
        url: 'https://manage.example.com/',
      },
      options,
    );
    expect(m.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: '✅ OK · Test message from deploy-watchdog', emoji: true } },
      { type: 'section', fields: [{ type: 'mrkdwn', text: '*Channel*\nops-slack' }, { type: 'mrkdwn', text: '*Config*\n/etc/watchdog.yaml' }] },
      { type: 'section', text: { type: 'mrkdwn', text: 'If you can read this, the channel works.' } },
      { type: 'section', text: { type: 'mrkdwn', text: '<https://manage.example.com/|Open>' } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'deploy-watchdog · ops-slack · test' }] },
    ]);
    expect(m.text).toBe('✅ OK · Test message from deploy-watchdog');
  });

  it('splits many fields into sections of ten and many lines into sections within the text limit', () => {
    const m = renderSlack(
      {
        type: 'notice',
        topic: 'digest',
        title: 'Daily digest',
        fields: Array.from({ length: 25 }, (_, i) => ({ label: `f${i}`, value: 'v' })),
        lines: Array.from({ length: 100 }, () => 'y'.repeat(200)),
      },
      options,
    );
    const fieldSections = m.blocks.filter((b) => b.type === 'section' && 'fields' in b);
    expect(fieldSections.map((b) => ('fields' in b ? b.fields.length : 0))).toEqual([10, 10, 5]);
    for (const t of mrkdwnTexts(m)) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  });
});
