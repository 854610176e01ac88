/**
 * `notify-test` reaches the four on-call kinds as every other: each gets its test message in its
 * own form (a PagerDuty change event, which pages nobody; an Opsgenie P5 alert closed at once; a
 * Teams card; a Discord embed), and a refused key is one failed line that never shows it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { startDiscordFake, type DiscordFake } from '../helpers/discord-fake.js';
import { startOpsgenieFake, type OpsgenieFake } from '../helpers/opsgenie-fake.js';
import { startPagerDutyFake, type PagerDutyFake } from '../helpers/pagerduty-fake.js';
import { startTeamsFake, type TeamsFake } from '../helpers/teams-fake.js';

let pd: PagerDutyFake;
let og: OpsgenieFake;
let teams: TeamsFake;
let discord: DiscordFake;
let dir: string;

beforeEach(async () => {
  [pd, og, teams, discord] = await Promise.all([
    startPagerDutyFake(),
    startOpsgenieFake(),
    startTeamsFake(),
    startDiscordFake({ now: () => 0 }),
  ]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-on-call-test-'));
});
afterEach(async () => {
  await Promise.all([pd.close(), og.close(), teams.close(), discord.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

function config(): string {
  return writeConfig(dir, [
    'api: { base_url: "http://127.0.0.1:1", token: "${DMS_API_TOKEN}" }',
    `state: { path: ${JSON.stringify(path.join(dir, 'state.db'))} }`,
    'notify:',
    '  delivery: { timeout: 5s }',
    '  channels:',
    `    - { name: pager, type: pagerduty, routing_key: "\${PD_KEY}", api_url: "${pd.root}" }`,
    `    - { name: genie, type: opsgenie, api_key: "\${OG_KEY}", api_url: "${og.root}" }`,
    '    - { name: teams, type: teams, webhook_url: "${TEAMS_URL}" }',
    '    - { name: discord, type: discord, webhook_url: "${DISCORD_URL}" }',
  ]);
}

describe('notify-test and the on-call channels', () => {
  it('sends each its test message in its own form', async () => {
    const env = {
      DMS_API_TOKEN: 'tok',
      PD_KEY: pd.routingKey,
      OG_KEY: og.apiKey,
      TEAMS_URL: teams.url,
      DISCORD_URL: discord.url,
    };
    const r = await runCli(['notify-test', '--config', config()], { env });
    expect(r).toMatchObject({
      code: 0,
      stdout: 'pager (pagerduty): ok\ngenie (opsgenie): ok\nteams (teams): ok\ndiscord (discord): ok\n',
    });
    expect(pd.changes).toHaveLength(1);
    expect(pd.changes[0]!.payload.summary).toBe('deploy-watchdog test message');
    expect(pd.opened).toEqual([]);
    expect(og.opened).toHaveLength(1);
    expect(og.opened[0]).toMatchObject({ priority: 'P5', status: 'closed', message: 'deploy-watchdog test message' });
    expect(teams.cards).toHaveLength(1);
    expect(discord.messages[0]!.embeds![0]!.title).toContain('deploy-watchdog test message');
    expect([pd.invalid, og.invalid, teams.invalid, discord.invalid]).toEqual([[], [], [], []]);
  });

  it('says a refused key in one line, without it', async () => {
    const wrong = 'f'.repeat(32);
    const env = {
      DMS_API_TOKEN: 'tok',
      PD_KEY: wrong,
      OG_KEY: 'wrong-key-1234',
      TEAMS_URL: teams.url,
      DISCORD_URL: discord.url,
    };
    const r = await runCli(['notify-test', '--config', config()], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('pager (pagerduty): failed: rejected (HTTP 400)');
    expect(r.stdout).toContain('genie (opsgenie): failed: rejected (HTTP 401)');
    expect(r.stdout + r.stderr).not.toContain(wrong);
    expect(r.stdout + r.stderr).not.toContain('wrong-key-1234');
  });
});
