/**
 * The Discord channel driven end to end against a fake channel webhook that checks Discord's limits
 * and keeps its rate-limit bucket on the test's clock: the firing, its acknowledgement (where the
 * route asks for it) and its end are messages with an embed each; API text is escaped for Discord's
 * markdown and `allowed_mentions` is empty, so nothing pings; the configured role is the only one
 * allowed; an empty bucket is waited out before sending (the fake never answers 429 to it), and a
 * 429's retry_after is honoured through the outbox; the webhook's token is never in the state or
 * the log.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import { startDiscordFake, type DiscordFake, type DiscordReceived } from '../helpers/discord-fake.js';
import { OnCallWorld } from './on-call-fixture.js';

let discord: DiscordFake;
let world: OnCallWorld;

async function start(limit = 5, resetAfterMs = 2_000): Promise<void> {
  world = await OnCallWorld.start();
  discord = await startDiscordFake({ now: () => world.clock.now(), limit, resetAfterMs });
}
afterEach(async () => {
  await world.close();
  await discord.close();
});

function open(extra = '') {
  return world.open(
    `name: oncall
type: discord
webhook_url: "\${DISCORD_URL}"${extra}`,
    { DISCORD_URL: discord.url },
    '{ match: { check: certificates }, channels: [oncall], send_acknowledged: true }',
  );
}

function texts(m: DiscordReceived): string {
  return [m.content ?? '', ...(m.embeds ?? []).flatMap((e) => [e.title ?? '', e.description ?? ''])].join('\n');
}

describe('the Discord channel, end to end', () => {
  beforeEach(() => start());

  it('posts the firing, the acknowledgement and the end with embeds, API text escaped, nobody pinged', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);

    expect(discord.invalid).toEqual([]);
    expect(discord.messages).toHaveLength(1);
    const fired = discord.messages[0]!;
    expect(fired.allowed_mentions).toEqual({ parse: [] });
    expect(fired.embeds).toHaveLength(1);
    expect(fired.embeds![0]).toMatchObject({ color: 0xd00000, title: expect.stringContaining('CRITICAL') });
    const text = texts(fired);
    expect(text).toContain('\\@everyone');
    expect(text).not.toMatch(/(?<!\\)@everyone/);
    expect(text).toContain('\\<\\@123456789012345678>');
    expect(text).toContain('\\*shop\\*');
    expect(text).not.toMatch(/(?<!\\)\[click/);
    expect(text).toContain(`[Console](https://watchdog.example.com/alert?fp=${encodeURIComponent(fingerprint)})`);

    await world.acknowledge(fingerprint);
    expect(discord.messages).toHaveLength(2);
    expect(texts(discord.messages[1]!)).toContain('acknowledged by alice');
    // The comment is the person's text: escaped too.
    expect(texts(discord.messages[1]!)).not.toMatch(/(?<!\\)@here/);

    await world.resolve(urlId);
    expect(discord.messages).toHaveLength(3);
    expect(discord.messages[2]!.embeds![0]).toMatchObject({
      color: 0x36a64f,
      title: expect.stringContaining('RESOLVED'),
    });
    expect(discord.invalid).toEqual([]);
    expect(discord.overLimit).toBe(0);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([discord.token])).toEqual([]);
  });

  it('allows the configured role, on a critical alert only, and no one else', async () => {
    open('\nmention: { roles: ["123456789012345678"] }');
    const { urlId } = world.hostileApp();
    await world.fire(urlId);
    const fired = discord.messages[0]!;
    expect(fired.allowed_mentions).toEqual({ parse: [], users: [], roles: ['123456789012345678'] });
    expect(fired.content).toMatch(/^<@&123456789012345678> /);
  });

  it('retries a 429 after its retry_after, through the outbox', async () => {
    open();
    const { urlId } = world.hostileApp();
    discord.answerNext({
      status: 429,
      headers: { 'retry-after': '13', 'x-ratelimit-scope': 'shared' },
      body: { message: 'You are being rate limited.', retry_after: 12.5, global: false },
    });
    world.sim.control.expireCertificate(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(world.lastError()).toContain('rate limited (HTTP 429, shared limit');
    world.clock.advance(12_000);
    await world.wd!.deliverDue();
    expect(discord.messages).toHaveLength(0);
    world.clock.advance(500);
    await world.wd!.deliverDue();
    expect(discord.messages).toHaveLength(1);
    expect(world.statuses()).not.toContain('pending');
  });
});

describe('the Discord channel and an empty bucket', () => {
  beforeEach(() => start(1, 30_000));

  it('waits for the bucket to reset before sending again, never drawing a 429', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    expect(discord.messages).toHaveLength(1);
    const asked = discord.requests.length;

    // Acknowledged at once: the bucket (1 per 30s) is empty, and the headers said so.
    acknowledge(world.wd!.store, { fingerprint, by: 'alice', via: 'cli', now: world.clock.now() });
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(discord.requests.length).toBe(asked);
    expect(world.lastError()).toContain('is empty until its reset');

    world.clock.advance(30_000);
    await world.wd!.deliverDue();
    expect(discord.messages).toHaveLength(2);
    expect(discord.overLimit).toBe(0);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([discord.token])).toEqual([]);
  });
});
