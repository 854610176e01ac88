/**
 * A custom template driven end to end: the daemon reads the simulator on a ManualClock and sends
 * to Discord's protocol-level fake, with a title inline in the config and a text from a file beside
 * it. The certificate of an app whose name tries every trick of Discord's markdown fires and ends:
 * the living message and the end's headline say what the template says, every value escaped (nobody pinged, no link formed),
 * within Discord's limits; a reload with another template changes the next message.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake, type DiscordReceived } from '../../helpers/discord-fake.js';
import { OnCallWorld } from '../on-call-fixture.js';

let discord: DiscordFake;
let world: OnCallWorld;

beforeEach(async () => {
  world = await OnCallWorld.start();
  discord = await startDiscordFake({ now: () => world.clock.now(), limit: 5, resetAfterMs: 2_000 });
});
afterEach(async () => {
  await world.close();
  await discord.close();
});

const TITLE = '{{tone_word}} on {{group.check}}: {{counts}} for {{about}} (via {{channel}})';
const TEXT = `{{! The on-call team's own words. }}
Heads up: {{app}} ({{labels.environment_type}}) is {{kind}} since {{since}}.
{{#facts}}
- {{label}}: {{value}}
{{/facts}}
{{#resolved}}All clear: {{status}}.{{/resolved}}
`;

function channel(title = TITLE): string {
  return `name: oncall
type: discord
webhook_url: "\${DISCORD_URL}"
template:
  title: "${title}"
  text_file: oncall-text.mustache`;
}

/** Every text of a message a person reads. */
function texts(m: DiscordReceived): string {
  return [m.content ?? '', ...(m.embeds ?? []).flatMap((e) => [e.title ?? '', e.description ?? ''])].join('\n');
}

/**
 * The fixture's hostile app name (HOSTILE_APP) as Discord's markdown must show it at the start of a
 * line: every character that could format or ping escaped.
 */
const SHOWN_APP =
  '1\\. \\*shop\\* \\@everyone \\<\\@123456789012345678> \\[click\\]\\(https://evil.example\\) # \\_x\\_ \\`rm\\` \\u{202e}gnp';

describe('a custom template, end to end through Discord', () => {
  it('shapes the firing and the end, every value escaped, nobody pinged', async () => {
    fs.writeFileSync(path.join(world.tmp.dir, 'oncall-text.mustache'), TEXT);
    world.open(channel(), { DISCORD_URL: discord.url });
    const { urlId } = world.hostileApp();
    await world.fire(urlId);

    expect(discord.invalid).toEqual([]);
    expect(discord.messages).toHaveLength(1);
    const fired = discord.messages[0]!;
    expect(fired.allowed_mentions).toEqual({ parse: [] });
    expect(fired.content!.split('\n')[0]).toBe(
      `CRITICAL on certificates: 1 certificate problem for ${SHOWN_APP} (via oncall)`,
    );
    const description = fired.embeds![0]!.description!;
    expect(description).toMatch(
      new RegExp(
        `^Heads up: ${SHOWN_APP.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')} \\(production\\) is firing since 20\\d\\d-`,
      ),
    );
    // The template's list of facts, then the embed's own facts and links, which it keeps.
    expect(description).toContain(
      ' is firing since 2026-11-01 12:00 UTC.\n- SSL status: expiring\\_soon\n**Project:**',
    );
    expect(texts(fired)).not.toMatch(/(?<!\\)@everyone|(?<!\\)<@\d|(?<!\\)\[click/);

    await world.resolve(urlId);
    // The end edits the living message, and its headline alone is said anew.
    expect(discord.messages).toHaveLength(2);
    const headline = `RESOLVED on certificates: 1 certificate problem for ${SHOWN_APP} (via oncall)`;
    expect(discord.messages[1]).toEqual({ content: headline, embeds: [], allowed_mentions: { parse: [] } });
    const [over] = [...discord.posted.values()].map((p) => p.message);
    expect(over!.content!.split('\n')[0]).toBe(headline);
    expect(over!.embeds![0]!.description).toMatch(/ is resolved since \.\n+All clear: RESOLVED after \d+m\./);
    expect(discord.invalid).toEqual([]);
    expect(discord.overLimit).toBe(0);
    expect(world.statuses()).not.toContain('pending');
  });

  it('takes another template on reload, read from its file anew', async () => {
    fs.writeFileSync(path.join(world.tmp.dir, 'oncall-text.mustache'), TEXT);
    world.open(channel(), { DISCORD_URL: discord.url });
    const { urlId } = world.hostileApp();
    fs.writeFileSync(path.join(world.tmp.dir, 'oncall-text.mustache'), 'Now: {{summary}}');
    await world.wd!.reload(world.config(channel('{{emoji}} {{headline}}'), { DISCORD_URL: discord.url }));
    await world.fire(urlId);
    expect(discord.messages).toHaveLength(1);
    const fired = discord.messages[0]!;
    // Inside a line, "1." starts no list: only a value that starts a line has it escaped.
    expect(fired.content!.split('\n')[0]).toBe(
      `🔴 1 certificate problem · ${SHOWN_APP.replace('1\\.', '1.')} · production`,
    );
    expect(fired.embeds![0]!.description).toMatch(/^Now: Certificate of /);
  });
});
