import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import { alertId } from '../../../src/alerts/alert-id.js';
import { consoleLink } from '../../../src/notify/channels/console-link.js';
import {
  alertControls,
  livingControls,
  parseButtonValue,
  type OfferSettings,
} from '../../../src/notify/channels/slack-app-buttons.js';
import { renderLiving } from '../../../src/notify/channels/slack-app-render.js';
import { slackInteractionsSchema } from '../../../src/notify/channels/slack-interactions-config.js';
import { type SlackBlock } from '../../../src/notify/channels/slack-render.js';
import { SLACK_LIMITS } from '../../../src/notify/channels/slack-limits.js';
import { alertEvent, NOW } from './fixtures.js';

const FP = 'failed_runs/run/123';
const ID = alertId(FP);

/** `interactions` with `allow` as given (the rest defaults). */
function interactions(allow: Record<string, unknown> = {}) {
  return slackInteractionsSchema.parse({ mode: 'socket', app_token: 'xapp-1-test', allow });
}

const ALL = interactions({ acknowledge: 'anyone', silence: { users: ['U0BOB'] }, remediate: { users: ['U0CAROL'] } });
const EVERYTHING: OfferSettings = {
  interactions: ALL,
  consoleUrl: 'https://watchdog.example.com',
  remedyOf: () => 'Retry now',
};

/** The buttons' labels, and what each hands back (a value) or opens (a URL). */
function shown(event: AlertEvent, settings: OfferSettings) {
  return alertControls(event, settings)?.buttons.map((b) => [b.text.text, b.value ?? b.url]);
}

describe('alertControls: what a living message offers about one alert', () => {
  it.each([
    {
      what: 'a firing alert, every action allowed to someone',
      event: alertEvent(),
      settings: EVERYTHING,
      buttons: [
        ['Acknowledge', `acknowledge:${ID}`],
        ['Silence 1h', `silence_1h:${ID}`],
        ['Silence 4h', `silence_4h:${ID}`],
        ['Retry now', `remediate:${ID}`],
        ['Open in console', `https://watchdog.example.com/alert?fp=failed_runs%2Frun%2F123`],
      ],
    },
    {
      what: 'an acknowledged one: Unacknowledge instead',
      event: alertEvent({ kind: 'acknowledged' }),
      settings: { ...EVERYTHING, remedyOf: undefined, consoleUrl: undefined },
      buttons: [
        ['Unacknowledge', `unacknowledge:${ID}`],
        ['Silence 1h', `silence_1h:${ID}`],
        ['Silence 4h', `silence_4h:${ID}`],
      ],
    },
    {
      what: 'the defaults: nobody may silence or remediate, so neither is offered',
      event: alertEvent(),
      settings: { ...EVERYTHING, interactions: interactions() },
      buttons: [
        ['Acknowledge', `acknowledge:${ID}`],
        ['Open in console', `https://watchdog.example.com/alert?fp=failed_runs%2Frun%2F123`],
      ],
    },
    {
      what: 'no policy would act when asked: no Retry now',
      event: alertEvent({ kind: 'escalated' }),
      settings: { ...EVERYTHING, remedyOf: () => undefined, consoleUrl: undefined },
      buttons: [
        ['Acknowledge', `acknowledge:${ID}`],
        ['Silence 1h', `silence_1h:${ID}`],
        ['Silence 4h', `silence_4h:${ID}`],
      ],
    },
    {
      what: 'no interactions: the console link alone',
      event: alertEvent(),
      settings: { ...EVERYTHING, interactions: undefined },
      buttons: [['Open in console', `https://watchdog.example.com/alert?fp=failed_runs%2Frun%2F123`]],
    },
    {
      what: 'no interactions and no console: nothing',
      event: alertEvent(),
      settings: { interactions: undefined, consoleUrl: undefined, remedyOf: undefined },
      buttons: undefined,
    },
    {
      what: 'a resolved alert: nothing',
      event: alertEvent({ kind: 'resolved' }),
      settings: EVERYTHING,
      buttons: undefined,
    },
  ])('$what', ({ event, settings, buttons }) => {
    expect(shown(event, settings)).toEqual(buttons);
  });

  it('hands back only what it does and a short id, never what the service sent', () => {
    const event = alertEvent({
      fingerprint: 'failed_runs/run/<!channel>',
      summary: '<!channel> *hi*',
      labels: { check: 'failed_runs', app: '<@U0EVIL>' },
    });
    const controls = alertControls(event, EVERYTHING)!;
    const values = [...controls.buttons.map((b) => b.value), ...controls.menu!.options.map((o) => o.value)];
    for (const value of values.filter((v) => v !== undefined)) expect(value).toMatch(/^[a-z_0-9]+:[0-9a-f]{8}$/);
    expect(JSON.stringify(controls)).not.toMatch(/channel>|U0EVIL/);
  });

  it('offers the same actions in a menu, within its five options', () => {
    const menu = alertControls(alertEvent(), EVERYTHING)!.menu!;
    expect(menu.type).toBe('overflow');
    expect(menu.options.map((o) => o.text.text)).toEqual([
      'Acknowledge',
      'Silence 1h',
      'Silence 4h',
      'Retry now',
      'Open in console',
    ]);
    expect(menu.options.at(-1)).toMatchObject({ url: expect.stringContaining('/alert?fp=') });
    // A menu needs two options: a console link alone is a button, never a menu.
    expect(alertControls(alertEvent(), { ...EVERYTHING, interactions: undefined })!.menu).toBeNull();
  });
});

describe('parseButtonValue', () => {
  it.each([
    [`acknowledge:${ID}`, { action: 'acknowledge', id: ID }],
    [`silence_4h:${ID}`, { action: 'silence_4h', id: ID }],
    [`remediate:${ID}`, { action: 'remediate', id: ID }],
    [`console:${ID}`, undefined],
    [`delete_everything:${ID}`, undefined],
    ['acknowledge:failed_runs/run/123', undefined],
    [`acknowledge:${ID}:more`, undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%s → %o', (value, expected) => {
    expect(parseButtonValue(value)).toEqual(expected);
  });
});

describe('consoleLink', () => {
  it.each([
    ['https://w.example.com', 'https://w.example.com/alert?fp=failed_runs%2Frun%2F123'],
    ['https://w.example.com/', 'https://w.example.com/alert?fp=failed_runs%2Frun%2F123'],
    ['https://example.com/watchdog', 'https://example.com/watchdog/alert?fp=failed_runs%2Frun%2F123'],
    [undefined, undefined],
  ])('%s', (base, expected) => {
    expect(consoleLink(base, FP)).toBe(expected);
  });
});

describe('the living message with its controls', () => {
  const ev = (app: string, id: number, over: Partial<AlertEvent> = {}) =>
    alertEvent({
      id,
      fingerprint: `failed_runs/run/${app}`,
      labels: { check: 'failed_runs', environment_type: 'production', app },
      summary: `Update of ${app} failed`,
      ...over,
    });
  const render = (alerts: AlertEvent[], maxItems = 10) =>
    renderLiving({ group: { check: 'failed_runs' }, alerts, notes: ['a note'], routes: [] }, maxItems, {
      now: NOW,
      channelName: 'ops-app',
      controls: livingControls(alerts, EVERYTHING),
    });
  const blocksOf = (m: ReturnType<typeof render>): SlackBlock[] => [...m.blocks, ...m.attachments![0]!.blocks];
  const actionIds = (blocks: SlackBlock[]) =>
    blocks.flatMap((b) => [
      ...(b.type === 'actions' ? b.elements.map((e) => e.action_id) : []),
      ...(b.type === 'section' && 'accessory' in b && b.accessory ? [b.accessory.action_id] : []),
    ]);

  it('shown in full: a row of buttons under each open alert, none under a resolved one', () => {
    const blocks = blocksOf(render([ev('a', 1), ev('b', 2, { kind: 'resolved', endsAt: '2026-11-01T11:00:00Z' })]));
    const rows = blocks.filter((b) => b.type === 'actions');
    expect(rows).toHaveLength(1);
    const under = blocks.indexOf(rows[0]!) - 1;
    expect(JSON.stringify(blocks[under])).toContain('Update of a failed');
    expect(JSON.stringify(rows[0])).toContain(`acknowledge:${alertId('failed_runs/run/a')}`);
    expect(JSON.stringify(blocks)).not.toContain(`acknowledge:${alertId('failed_runs/run/b')}`);
  });

  it('one line each: a menu beside each open line', () => {
    const alerts = ['a', 'b', 'c', 'd', 'e'].map((app, i) => ev(app, i + 1));
    const blocks = blocksOf(render(alerts));
    const menus = blocks.filter((b) => b.type === 'section' && 'accessory' in b && b.accessory);
    expect(menus).toHaveLength(5);
    expect(blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it("stays within Slack's limits with 100 open alerts: 50 blocks, action_ids unique, menus while they fit", () => {
    const alerts = Array.from({ length: 100 }, (_, i) => ev(`app-${i}`, i + 1));
    const blocks = blocksOf(render(alerts, 100));
    expect(blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    const ids = actionIds(blocks);
    expect(ids.length).toBeGreaterThan(30);
    expect(new Set(ids).size).toBe(ids.length);
    // Nothing cut for room: the footer and the note are still there.
    expect(JSON.stringify(blocks)).not.toContain('message shortened');
    expect(JSON.stringify(blocks)).toContain('a note');
  });
});
