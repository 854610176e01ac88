/**
 * `packLines`: whole lines joined by their separator, a first line that is empty included (it
 * once lost the separator after it, so `['', 'b']` read `'b'`), and its `ending` given what was
 * packed; and the Teams card a receiver gets of a log whose first line is blank.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import { teamsChannel } from '../../../src/notify/channels/teams.js';
import { teamsConfigSchema } from '../../../src/notify/channels/teams-config.js';
import { packLines } from '../../../src/notify/channels/text-budget.js';
import { cardTexts, startTeamsFake, type TeamsFake } from '../../helpers/teams-fake.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

describe('packLines', () => {
  it.each([
    { lines: ['', 'b'], separator: '\n', packed: '\nb' },
    { lines: ['', '', 'b'], separator: '\n', packed: '\n\nb' },
    { lines: ['a', '', 'b'], separator: '\n', packed: 'a\n\nb' },
    { lines: ['', 'b'], separator: '\n\n', packed: '\n\nb' },
    { lines: ['a', 'b'], separator: '\n', packed: 'a\nb' },
    { lines: [''], separator: '\n', packed: '' },
    { lines: [], separator: '\n', packed: '' },
  ])('packs $lines joined by $separator whole', ({ lines, separator, packed }) => {
    expect(packLines(lines, 100, undefined, separator)).toBe(packed);
  });

  it.each([
    { lines: ['a', 'b', 'cccccc'], max: 5, packed: 'a\nb', line: 'cccccc' },
    { lines: ['', 'b', 'cccccc'], max: 5, packed: '\nb', line: 'cccccc' },
    { lines: ['', 'cccccc'], max: 5, packed: '', line: 'cccccc' },
    { lines: ['cccccc', 'b'], max: 5, packed: '', line: 'cccccc' },
  ])('ends $lines within $max with what was packed and the line that did not fit', ({ lines, max, packed, line }) => {
    const seen: [string, string][] = [];
    const text = packLines(lines, max, (out, next) => {
      seen.push([out, next]);
      return `${out}|`;
    });
    expect(seen).toEqual([[packed, line]]);
    expect(text).toBe(`${packed}|`);
    expect(packLines(lines, max)).toBe(packed);
  });
});

describe("a Teams card's log whose first line is blank", () => {
  let teams: TeamsFake;
  beforeAll(async () => {
    teams = await startTeamsFake();
  });
  afterAll(() => teams.close());

  it('reaches the receiver with the blank line and its separator kept', async () => {
    const config = teamsConfigSchema.parse({ name: 'oncall', type: 'teams', webhook_url: teams.url });
    const channel = teamsChannel.create(config, { logger: captureLogger().logger, clock: new ManualClock() });
    const lines = ['', 'npm ERR! missing script: build'].map((line) => ({ time: null, line, error: true }));
    const event = alertEvent({ context: { facts: [], notes: [], log: { source: 'setup', matched: 2, lines } } });

    expect(await channel.send(channel.render(alerts([event])))).toEqual({ outcome: 'ok' });

    expect(teams.invalid).toEqual([]);
    const texts = cardTexts(teams.cards[0]!);
    const title = texts.findIndex((t) => t.startsWith('**Log \\(setup\\)'));
    expect(texts[title + 1]).toBe('\n\nnpm ERR! missing script: build');
  });
});
