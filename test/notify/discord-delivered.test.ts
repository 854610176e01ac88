/**
 * The Discord channel driven end to end against a fake channel webhook that checks Discord's limits
 * and keeps its rate-limit buckets on the test's clock: the firing is one living message, which its
 * acknowledgement and its end edit in place (the end also said in a short new message); a message
 * deleted in Discord is posted again and followed, every alert of its group kept when that post is
 * refused once; API text is escaped for Discord's markdown and `allowed_mentions` is empty, so
 * nothing pings; the configured role is the only one allowed; an empty bucket is waited out before sending (the fake never answers 429 to it), and a
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

  it('posts the firing, then edits that one message on acknowledgement and resolve, API text escaped, nobody pinged', async () => {
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

    expect(discord.requests[0]!.url).toMatch(/\?wait=true$/);
    const [id] = [...discord.posted.keys()];
    expect(id).toBeDefined();

    await world.acknowledge(fingerprint);
    // No new message: the one posted says who has it.
    expect(discord.messages).toHaveLength(1);
    const living = discord.posted.get(id!)!;
    expect(living.edits).toBe(1);
    expect(texts(living.message)).toContain('acknowledged by alice');
    // The comment is the person's text: escaped too.
    expect(texts(living.message)).not.toMatch(/(?<!\\)@here/);
    expect(discord.requests.at(-1)).toMatchObject({ method: 'PATCH', url: expect.stringMatching(`/messages/${id}$`) });

    await world.resolve(urlId);
    expect(living.edits).toBe(2);
    expect(living.message.embeds![0]).toMatchObject({ color: 0x36a64f, title: expect.stringContaining('RESOLVED') });
    // Discord tells nobody of an edit: the end is also said, in one short line.
    expect(discord.messages).toHaveLength(2);
    expect(discord.messages[1]).toMatchObject({ content: expect.stringContaining('RESOLVED'), embeds: [] });
    expect(discord.posted.size).toBe(1);
    expect(discord.invalid).toEqual([]);
    expect(discord.overLimit).toBe(0);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([discord.token])).toEqual([]);
  });

  it('posts a new living message when its message was deleted, and edits that one next', async () => {
    // A name of its own: set by the posts only, never sent on an edit (Discord refuses it there).
    open('\nusername: watchdog');
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    const [first] = [...discord.posted.keys()];
    discord.deleteMessage(first!);

    await world.acknowledge(fingerprint);
    expect(discord.requests.at(-2)).toMatchObject({ method: 'PATCH' });
    expect(discord.posted.size).toBe(1);
    const [second] = [...discord.posted.keys()];
    expect(second).not.toBe(first);
    expect(texts(discord.posted.get(second!)!.message)).toContain('acknowledged by alice');
    expect(world.logs.text()).toContain('the living message is gone from Discord');

    await world.resolve(urlId);
    expect(discord.posted.get(second!)!.edits).toBe(1);
    expect(discord.posted.get(second!)!.message.embeds![0]!.title).toContain('RESOLVED');
    expect(discord.posted.get(second!)!.message.username).toBe('watchdog');
    expect(discord.invalid).toEqual([]);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([discord.token])).toEqual([]);
  });

  for (const status of [429, 500]) {
    it(`keeps every alert of the group when the post replacing a deleted message is refused (${status})`, async () => {
      open();
      // Two certificates of one app: one group, one message of two alerts.
      const [a, b] = [...world.sim.control.state.apps.values()]
        .map((app) => app.urlIds.filter((u) => world.sim.control.state.urls.get(u)!.sslExpiresAt !== null))
        .find((urls) => urls.length >= 2)!;
      const fingerprint = await world.fire(a!);
      world.sim.control.checks.certificates.expire(b!, { inDays: 2 });
      await world.wd!.runOnce(['urls']);
      await world.wd!.deliverDue();
      const [first] = [...discord.posted.keys()];
      expect(discord.posted.get(first!)!.message.embeds).toHaveLength(2);
      discord.deleteMessage(first!);

      // The edit finds the message gone; the post of its replacement is refused, then retried.
      discord.answerNext({ status, body: { message: 'refused', retry_after: 0.5, global: false } }, 1, 1);
      await world.acknowledge(fingerprint);
      world.clock.advance(60_000);
      await world.wd!.deliverDue();
      expect(world.statuses()).not.toContain('pending');
      const [second] = [...discord.posted.values()];
      expect(second!.message.embeds).toHaveLength(2);
      expect(texts(second!.message)).toContain('acknowledged by alice');
    });
  }

  it('posts again, saying a duplicate may exist, when a crash cut its post short before its id was kept', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    // As a kill -9 between Discord's answer and keeping the id leaves it: the intent, without its id.
    world
      .wd!.store.db.prepare(`UPDATE slack_app_messages SET status = 'posting', ts = NULL WHERE channel = 'oncall'`)
      .run();

    await world.acknowledge(fingerprint);
    // A webhook reads no history: nothing to edit, a new living message with the group as it stands.
    expect(discord.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
    expect(discord.posted.size).toBe(2);
    const [, second] = [...discord.posted.values()];
    expect(texts(second!.message)).toContain('acknowledged by alice');
    expect(world.logs.text()).toContain('so one duplicate may exist');

    await world.resolve(urlId);
    expect(second!.edits).toBe(1);
    expect(world.statuses()).not.toContain('pending');
  });

  it('posts again, saying a duplicate may exist, when the answer to its post was lost', async () => {
    open();
    const { urlId } = world.hostileApp();
    // Discord takes the post; its answer (the message's id) never comes back.
    discord.loseNextAnswers(1);
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    await world.wd!.runOnce(['urls']);
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(discord.posted.size).toBe(1);
    expect(world.logs.text()).toContain("no answer came to the living message's post");

    for (let i = 0; i < 10 && discord.posted.size < 2; i++) {
      world.clock.advance(60_000);
      await world.wd!.deliverDue();
    }
    // A webhook reads no history: the one Discord may have is closed, a new one posted and followed.
    expect(discord.posted.size).toBe(2);
    expect(world.statuses()).not.toContain('pending');
    const [, second] = [...discord.posted.keys()];
    await world.resolve(urlId);
    expect(discord.posted.get(second!)!.edits).toBe(1);
    expect(world.leaks([discord.token])).toEqual([]);
  });

  it('retries a 429 on an edit after its retry_after, through the outbox', async () => {
    open();
    const { urlId } = world.hostileApp();
    const fingerprint = await world.fire(urlId);
    const [id] = [...discord.posted.keys()];
    discord.answerNext({
      status: 429,
      headers: { 'retry-after': '8', 'x-ratelimit-scope': 'user', 'x-ratelimit-bucket': 'edits' },
      body: { message: 'You are being rate limited.', retry_after: 7.5, global: false },
    });
    acknowledge(world.wd!.store, { fingerprint, by: 'alice', via: 'console', now: world.clock.now() });
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(world.lastError()).toContain('rate limited (HTTP 429, user limit, bucket edits');
    world.clock.advance(7_000);
    await world.wd!.deliverDue();
    expect(discord.posted.get(id!)!.edits).toBe(0);
    world.clock.advance(500);
    await world.wd!.deliverDue();
    expect(discord.posted.get(id!)!.edits).toBe(1);
    expect(discord.messages).toHaveLength(1);
    expect(world.statuses()).not.toContain('pending');
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
    world.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
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

    // Acknowledged at once: the bucket (1 per 30s) is empty, and the headers said so; the edit waits too.
    acknowledge(world.wd!.store, { fingerprint, by: 'alice', via: 'cli', now: world.clock.now() });
    expect(await world.wd!.deliverDue()).toMatchObject({ retried: 1 });
    expect(discord.requests.length).toBe(asked);
    expect(world.lastError()).toContain('is empty until its reset');

    world.clock.advance(30_000);
    await world.wd!.deliverDue();
    expect([...discord.posted.values()].map((p) => p.edits)).toEqual([1]);
    expect(discord.overLimit).toBe(0);
    expect(world.statuses()).not.toContain('pending');
    expect(world.leaks([discord.token])).toEqual([]);
  });
});
