/**
 * The on-call kinds render what the service sent within their services' limits, whatever it sent:
 * a record of 126,000 fields with a 6.8 MB summary, and a message of 30 alerts, each with a long
 * log. Teams' card passes the Adaptive Card 1.5 check and stays under 28 KB; Discord's message
 * passes its limits (10 embeds, 6,000 characters); PagerDuty's event stays far under its 512 KB,
 * and Opsgenie's create under its field limits.
 */
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../../src/lib/alert-vocabulary.js';
import { renderDiscord } from '../../../src/notify/channels/discord.js';
import { renderOpsgenie } from '../../../src/notify/channels/opsgenie.js';
import { renderPagerDuty } from '../../../src/notify/channels/pagerduty.js';
import { renderTeams } from '../../../src/notify/channels/teams.js';
import { discordMessage } from '../../helpers/discord-fake.js';
import { TEAMS_MESSAGE_LIMIT, workflowsMessage } from '../../helpers/teams-fake.js';
import { alertEvent, alerts, NOW } from './fixtures.js';

const MANY = 126_000;
const facts: Fact[] = Array.from({ length: MANY }, (_, i) => ({ label: `field_${i}`, value: `v${i} *x* @everyone` }));
const huge = alerts([alertEvent({ facts, summary: `${'very long reason '.repeat(400_000)}end` })]);
const log = (i: number) => ({
  source: 'setup' as const,
  matched: 40,
  lines: Array.from({ length: 40 }, (_, j) => ({
    time: null,
    line: `ERROR ${i}/${j} ${'x'.repeat(500)}`,
    error: true,
  })),
});
const many = alerts(
  Array.from({ length: 30 }, (_, i) =>
    alertEvent({ id: i + 1, fingerprint: `failed_runs/run/${i}`, context: { facts: [], notes: [], log: log(i) } }),
  ),
);
/**
 * Text that grows as it is escaped and encoded: markup (each character backslash-escaped, and the
 * backslash escaped again in JSON) and characters of three and four bytes in UTF-8 (CJK, emoji).
 */
const grown = (i: number) => ['*_[@]<|'.repeat(15_000), '監視'.repeat(50_000), '🔥🚨'.repeat(25_000)][i % 3]!;
const hostile = alerts(
  Array.from({ length: 12 }, (_, i) =>
    alertEvent({
      id: i + 1,
      fingerprint: `failed_runs/run/${i}`,
      summary: grown(i),
      labels: { ...alertEvent().labels, app: grown(i + 1).slice(0, 300) },
      facts: Array.from({ length: 30 }, (_, j) => ({ label: `field_${j}`, value: grown(i + j) })),
      context: {
        facts: [],
        notes: [],
        log: {
          source: 'setup' as const,
          matched: 40,
          lines: Array.from({ length: 40 }, (_, j) => ({ time: null, line: grown(j), error: true })),
        },
      },
    }),
  ),
);
const base = { now: NOW, channelName: 'oncall', consoleUrl: 'https://watchdog.example.com' };

describe.each([
  ['a record of 126,000 fields', huge],
  ['30 alerts with long logs', many],
  ['12 alerts of markup, CJK and emoji', hostile],
])('%s', (_what, notification) => {
  it('is one valid Teams card under 28 KB', () => {
    const message = renderTeams(notification, base);
    expect(workflowsMessage.safeParse(message).error?.issues ?? []).toEqual([]);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(TEAMS_MESSAGE_LIMIT);
  });

  it("is one Discord message within Discord's limits", () => {
    const message = renderDiscord(notification, base);
    expect(discordMessage.safeParse(message).error?.issues ?? []).toEqual([]);
    expect(message.embeds.length).toBeGreaterThan(0);
  });

  it('is a PagerDuty trigger per alert, each far under 512 KB', () => {
    const requests = renderPagerDuty(notification, { ...base, source: 'deploy-watchdog' });
    expect(requests).toHaveLength(notification.events.length);
    for (const r of requests) expect(JSON.stringify(r.request).length).toBeLessThan(100_000);
  });

  it("is an Opsgenie create per alert within the API's limits", () => {
    const requests = renderOpsgenie(notification, { ...base, tags: [] });
    expect(requests).toHaveLength(notification.events.length);
    for (const { request } of requests) {
      const body = request.body as { message: string; description: string; details: Record<string, string> };
      expect(body.message.length).toBeLessThanOrEqual(130);
      expect(body.description.length).toBeLessThanOrEqual(15_000);
      const detailChars = Object.entries(body.details).reduce((n, [k, v]) => n + k.length + v.length, 0);
      expect(detailChars).toBeLessThanOrEqual(8_000);
    }
  });
});

it("keeps Discord's embeds within 6,000 characters when the last one starts with less left than a title", () => {
  // Ten alerts whose apps' names are long markup (each title 256) and whose summaries grow, so the
  // embeds fill the 6,000 unevenly: for some lengths the last starts with 100 to 255 left.
  const overs: number[] = [];
  for (let n = 100; n < 400; n++) {
    const events = Array.from({ length: 10 }, (_, i) =>
      alertEvent({
        id: i + 1,
        fingerprint: `f/${i}`,
        summary: 'x'.repeat(n + i * 13),
        labels: { ...alertEvent().labels, app: '*'.repeat(300) },
      }),
    );
    if (!discordMessage.safeParse(renderDiscord(alerts(events), base)).success) overs.push(n);
  }
  expect(overs).toEqual([]);
});

describe('text with lone surrogates (half an emoji, as a cut elsewhere leaves it)', () => {
  const half = (s: string) => `${s}\ud83d${s}\udd25${s}`;
  const notification = alerts(
    Array.from({ length: 3 }, (_, i) =>
      alertEvent({
        id: i + 1,
        fingerprint: `failed_runs/run/${i}`,
        summary: half('summary ') + '🔥'.repeat(3_000),
        labels: { ...alertEvent().labels, app: half('shop') },
        facts: [{ label: 'reason', value: `${'🔥'.repeat(150)}x${'🔥'.repeat(2_000)}` }],
      }),
    ),
  );
  /** The lone surrogates JSON writes as `\udXXX` escapes, which a strict JSON reader (serde_json, Jason) refuses. */
  const lone = (message: unknown) => JSON.stringify(message).match(/\\ud[89a-f][0-9a-f]{2}/g) ?? [];

  it.each([
    ['Teams', () => renderTeams(notification, base)],
    ['Discord', () => renderDiscord(notification, base)],
    ['PagerDuty', () => renderPagerDuty(notification, { ...base, source: 'deploy-watchdog' })],
    ['Opsgenie', () => renderOpsgenie(notification, { ...base, tags: [] })],
  ])('arrive in %s as U+FFFD, and no cut leaves one', (_kind, render) => {
    const message = render();
    expect(lone(message)).toEqual([]);
    expect(JSON.stringify(message)).toContain('\ufffd');
  });
});
