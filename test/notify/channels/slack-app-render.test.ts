import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import {
  allResolved,
  mergeShown,
  renderLiving,
  TONE_COLOURS,
  type LivingState,
} from '../../../src/notify/channels/slack-app-render.js';
import { SLACK_LIMITS } from '../../../src/notify/channels/slack-limits.js';
import { alertEvent, NOW } from './fixtures.js';

const GROUP = { check: 'failed_runs', environment_type: 'production' };
const OPTIONS = { now: NOW, channelName: 'ops-app' };

/** An event of alert `app`, with id `id`. */
function ev(app: string, id: number, over: Partial<AlertEvent> = {}): AlertEvent {
  return alertEvent({
    id,
    fingerprint: `failed_runs/run/${app}`,
    summary: `Update of ${app} (production) failed at step install`,
    labels: { check: 'failed_runs', environment_type: 'production', app },
    ...over,
  });
}

const resolved = (app: string, id: number) =>
  ev(app, id, { kind: 'resolved', endsAt: '2026-11-01T11:30:00.000Z', resolution: 'run #124 succeeded' });

function living(alerts: AlertEvent[], notes: string[] = []): LivingState {
  return { group: GROUP, alerts, notes, routes: [] };
}

describe('mergeShown', () => {
  it.each([
    { what: 'a new alert joins', shown: [ev('a', 1)], delivered: [ev('b', 2)], ids: [1, 2] },
    { what: 'a later event replaces the one shown', shown: [ev('a', 1)], delivered: [resolved('a', 3)], ids: [3] },
    {
      what: 'a retry of an older delivery never rolls one back',
      shown: [resolved('a', 3)],
      delivered: [ev('a', 1)],
      ids: [3],
    },
    {
      what: 'the same delivery twice changes nothing',
      shown: [ev('a', 1), ev('b', 2)],
      delivered: [ev('b', 2)],
      ids: [1, 2],
    },
  ])('$what', ({ shown, delivered, ids }) => {
    expect(mergeShown(shown, delivered).map((e) => e.id)).toEqual(ids);
  });
});

describe('allResolved', () => {
  it.each([
    { alerts: [], over: false },
    { alerts: [ev('a', 1)], over: false },
    { alerts: [resolved('a', 2), ev('b', 3)], over: false },
    { alerts: [resolved('a', 2), resolved('b', 4)], over: true },
  ])('$alerts.length alerts → $over', ({ alerts, over }) => {
    expect(allResolved(alerts)).toBe(over);
  });
});

describe('renderLiving', () => {
  it.each([
    {
      what: 'a critical alert open',
      alerts: [ev('a', 1)],
      header: '🔴 CRITICAL · 1 failed run · a · production',
      colour: TONE_COLOURS.critical,
    },
    {
      what: 'a warning open beside a resolved one',
      alerts: [resolved('a', 3), ev('b', 2, { severity: 'warning' })],
      header: '🟠 WARNING · 1 failed run · 1 resolved · production',
      colour: TONE_COLOURS.warning,
    },
    {
      what: 'every alert resolved',
      alerts: [resolved('a', 3), resolved('b', 4)],
      header: '✅ RESOLVED · 2 failed runs · production',
      colour: TONE_COLOURS.resolved,
    },
  ])('$what: the header and the colour bar follow the worst alert still open', ({ alerts, header, colour }) => {
    const m = renderLiving(living(alerts), 10, OPTIONS);
    expect(m.blocks).toEqual([{ type: 'header', text: { type: 'plain_text', text: header, emoji: true } }]);
    expect(m.attachments).toHaveLength(1);
    expect(m.attachments?.[0]?.color).toBe(colour);
    expect(m.text).toContain(header);
  });

  it('lists the open alerts first and marks the resolved ones as over', () => {
    const m = renderLiving(living([resolved('a', 3), ev('b', 2)]), 10, OPTIONS);
    const texts = m.attachments![0]!.blocks.map((b) => JSON.stringify(b));
    const open = texts.findIndex((t) => t.includes('Update of b'));
    const over = texts.findIndex((t) => t.includes('was: Update of a'));
    expect(open).toBeGreaterThanOrEqual(0);
    expect(over).toBeGreaterThan(open);
    expect(texts[over]).toContain('RESOLVED after 1h 30m');
  });

  it('lists at most max_items_per_message and counts the rest, the resolved among them in the header', () => {
    const alerts = [ev('a', 1), ev('b', 2), ev('c', 3), resolved('d', 4), resolved('e', 5)];
    const m = renderLiving(living(alerts), 2, OPTIONS);
    expect(m.blocks[0]).toMatchObject({ text: { text: '🔴 CRITICAL · 3 failed runs · 2 resolved · production' } });
    expect(JSON.stringify(m.attachments)).toContain('…and 3 more not shown');
  });

  it('keeps its notes above the footer, escaped like any API text (no mention gets through)', () => {
    const m = renderLiving(living([ev('a', 1)], ['Retried automatically: <!channel> *done*']), 10, OPTIONS);
    const blocks = m.attachments![0]!.blocks;
    expect(blocks.at(-2)).toEqual({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: '*Latest:* Retried automatically: &lt;!channel&gt; *done*', verbatim: true }],
    });
    expect(blocks.at(-1)).toMatchObject({ type: 'context', elements: [{ text: 'deploy-watchdog · ops-app' }] });
  });

  it("stays within Slack's block limit, however many alerts and notes", () => {
    const alerts = Array.from({ length: 100 }, (_, i) => ev(`app-${i}`, i + 1));
    const m = renderLiving(living(alerts, ['a note']), 100, OPTIONS);
    expect(m.blocks.length + m.attachments![0]!.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  });
});
