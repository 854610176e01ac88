/**
 * The Teams channel driven end to end against a fake Workflows webhook that checks every card
 * against the Adaptive Card schema 1.5: a firing alert is a card with a coloured header, the facts,
 * the context and the links as buttons; its acknowledgement (where the route asks for it) and its
 * end are cards too; API text is escaped for the card's markdown; a 429 is retried through the
 * outbox; the webhook's signature is never in the state or the log; and the retired Office 365
 * connector URLs are refused at load with a message that says what to use.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { cardTexts, startTeamsFake, type ReceivedCard, type TeamsFake } from '../helpers/teams-fake.js';
import { OnCallWorld } from './on-call-fixture.js';

let teams: TeamsFake;
let world: OnCallWorld;

beforeEach(async () => {
  teams = await startTeamsFake();
  world = await OnCallWorld.start();
});
afterEach(async () => {
  await world.close();
  await teams.close();
});

function open() {
  return world.open(
    `name: oncall
type: teams
webhook_url: "\${TEAMS_URL}"`,
    { TEAMS_URL: teams.url },
    '{ match: { check: certificates }, channels: [oncall], send_acknowledged: true }',
  );
}

/** The header's container and its title. */
function header(card: ReceivedCard): { style: string | undefined; title: string } {
  const first = card.body[0] as { type: string; style?: string; items: { text: string }[] };
  expect(first.type).toBe('Container');
  return { style: first.style, title: first.items[0]!.text };
}

describe('the Teams channel, end to end', () => {
  it('posts a valid Adaptive Card 1.5 for the firing, the acknowledgement and the end, API text escaped', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);

    expect(teams.invalid).toEqual([]);
    expect(teams.cards).toHaveLength(1);
    const fired = teams.cards[0]!;
    expect(header(fired)).toMatchObject({ style: 'attention', title: expect.stringContaining('CRITICAL') });
    const text = cardTexts(fired).join('\n');
    // The name's markdown is escaped: no emphasis, no link, no list, no code span.
    expect(text).toContain('\\*shop\\*');
    expect(text).toContain('\\[click\\]\\(https://evil.example\\)');
    expect(text).toContain('\\<@123456789012345678\\>');
    expect(text).not.toMatch(/(?<!\\)\[click/);
    expect(text).toContain('\\u{202e}');
    expect(text).toContain('SSL status');
    expect(fired.actions).toContainEqual({
      type: 'Action.OpenUrl',
      title: 'Open in console',
      url: `https://watchdog.example.com/alert?fp=${encodeURIComponent(fingerprint)}`,
    });
    for (const a of fired.actions ?? []) expect(a.url).not.toContain('evil.example');

    await world.acknowledge(fingerprint);
    expect(teams.cards).toHaveLength(2);
    expect(cardTexts(teams.cards[1]!).join('\n')).toContain('acknowledged by alice');
    // A Workflows card cannot be edited: the new one's header says the state.
    expect(header(teams.cards[1]!).title).toMatch(/^🔴 CRITICAL · ACKNOWLEDGED by alice · 1 certificate problem/);

    await world.resolve(urlId);
    expect(teams.cards).toHaveLength(3);
    expect(header(teams.cards[2]!)).toMatchObject({ style: 'good', title: expect.stringContaining('RESOLVED') });
    expect(teams.invalid).toEqual([]);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([teams.signature])).toEqual([]);
  });

  it('retries a 429 through the outbox, waiting its Retry-After', async () => {
    open();
    const { urlId } = world.hostileApp();
    teams.answerNext({ status: 429, headers: { 'retry-after': '60' }, body: { error: { code: 'TooManyRequests' } } });
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    world.clock.advance(59_000);
    await world.wd!.deliverDue();
    expect(teams.cards).toHaveLength(0);
    world.clock.advance(1_000);
    await world.wd!.deliverDue();
    expect(teams.cards).toHaveLength(1);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([teams.signature])).toEqual([]);
  });

  it.each([
    'https://contoso.webhook.office.com/webhookb2/1234@abcd/IncomingWebhook/5678/efgh',
    'https://outlook.office.com/webhook/1234@abcd/IncomingWebhook/5678/efgh',
  ])('refuses the retired connector URL %s, saying to use a Workflows webhook, without showing it', (url) => {
    const parsed = channelConfigSchema.safeParse({ name: 't', type: 'teams', webhook_url: url });
    expect(parsed.success).toBe(false);
    const message = parsed.error!.issues.map((i) => i.message).join('\n');
    expect(message).toContain('Office 365 connector');
    expect(message).toContain('Workflows');
    expect(message).not.toContain('IncomingWebhook');
  });
});
