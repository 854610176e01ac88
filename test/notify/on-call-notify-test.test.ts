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

  it('validate checks a file whose keys and URLs are not set here, with stand-ins of their forms', async () => {
    const r = await runCli(['validate', '--config', config()], { env: { DMS_API_TOKEN: 'tok' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('4 channels (pager:pagerduty, genie:opsgenie, teams:teams, discord:discord)');
  });

  it('validate says what to set for a wrong key, a retired Teams URL, a bad Discord ID and name', async () => {
    const file = writeConfig(dir, [
      'api: { base_url: "http://127.0.0.1:1", token: tok }',
      'notify:',
      '  channels:',
      '    - { name: pager, type: pagerduty, routing_key: short }',
      '    - { name: teams, type: teams, webhook_url: "https://contoso.webhook.office.com/webhookb2/secret-part" }',
      '    - { name: discord, type: discord, webhook_url: "https://discord.com/api/webhooks/1/t", mention: { roles: [role] } }',
      '    - { name: named, type: discord, webhook_url: "https://discord.com/api/webhooks/1/t", username: "Discord alerts" }',
    ]);
    const r = await runCli(['validate', '--config', file], { env: {} });
    expect(r.code).toBe(2);
    const out = r.stdout + r.stderr;
    expect(out).toContain('routing_key: must be the 32-character Integration Key of an "Events API V2" integration');
    expect(out).toContain('webhook_url: is an Office 365 connector webhook, which Microsoft retired');
    expect(out).toContain('"Post to a channel when a webhook request is received"');
    expect(out).toContain('mention.roles[0]: must be a Discord ID');
    expect(out).toContain('username: must not contain "discord" or "clyde"');
    expect(out).not.toContain('secret-part');
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
