/**
 * The daemon with a Slack app channel, end to end: the simulator's certificates and URL checks
 * through the real cycles, outbox and delivery, to the fake Slack Web API on loopback. A problem
 * gets one living message, updated in place when it resolves (after a restart too, with no second
 * post) and said in its thread each time; a rate limit pauses the channel for Slack's Retry-After
 * and then delivers once; an unknown channel is a permanent refusal whose reason says what to fix;
 * the bot token is in no log line, no outbox row and nowhere in the state file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { LogCapture } from '../notify/notify-fixture.js';
import { faultConfig, manualSim, MINUTE, openWatchdog, tempDir } from './fault-fixture.js';

const TOKEN = 'xoxb-daemon-test-SECRET-bot-token';
/** nova-books-prod's URL in this seed: its certificate is fine until a test makes it expire. */
const URL_ID = 1;
const FINGERPRINT = `certificates/url/${URL_ID}`;

let sim: RunningSimulator;
let clock: ManualClock;
let slack: SlackApi;
let tmp: ReturnType<typeof tempDir>;
let log: LogCapture;
const open: Watchdog[] = [];

beforeEach(async () => {
  // Seed 7: certificates expiring in staging and development, none in production yet.
  ({ sim, clock } = await manualSim({ apps: 12, seed: 7 }));
  slack = await startSlackApi({ token: TOKEN, now: () => clock.now() });
  tmp = tempDir('dw-slack-app-');
  log = new LogCapture();
});
afterEach(async () => {
  for (const wd of open.splice(0)) await wd.stop(500);
  await slack.close();
  await sim.close();
  tmp.cleanup();
});

function watchdog(channel = 'C0ALERTS'): Watchdog {
  const notify = `notify:
  channels:
    - { name: ops-app, type: slack_app, bot_token: ${TOKEN}, channel: ${channel}, api_url: "${slack.url}" }
  routes: [{ channels: [ops-app] }]
  delivery: { initial_backoff: 10s, max_backoff: 1m, timeout: 5s }`;
  const wd = openWatchdog(
    faultConfig(sim, tmp.dir, { notify, extra: 'jobs: { jitter: 0s, maintenance: "off" }' }),
    clock,
    { logger: log.logger },
  );
  open.push(wd);
  return wd;
}

async function cycle(wd: Watchdog) {
  clock.advance(MINUTE);
  await wd.runOnce(['urls']);
  return wd.deliverDue();
}

/** Where the state says an alert's living message is. */
function linkOf(wd: Watchdog, fingerprint: string): { ts: string; status: string; closed_reason: string | null } {
  return wd.store.db
    .prepare(
      `SELECT m.ts, m.status, m.closed_reason FROM slack_app_messages m
       JOIN slack_app_message_alerts a ON a.message_id = m.id WHERE a.fingerprint = ? ORDER BY m.id DESC`,
    )
    .get(fingerprint) as never;
}

const parents = () => slack.inChannel().filter((m) => !m.thread_ts);
const shown = (ts: string) => JSON.stringify(slack.messages().find((m) => m.ts === ts));

/** Every place the token must not be: the logs, the outbox, what Slack was sent, the state file. */
function expectNoToken(wd: Watchdog): void {
  wd.store.db.checkpoint();
  const texts = [
    log.text(),
    JSON.stringify(wd.store.db.prepare('SELECT * FROM outbox').all()),
    JSON.stringify(wd.store.db.prepare('SELECT * FROM outbox_bodies').all()),
    JSON.stringify(slack.messages()),
    JSON.stringify(slack.calls),
    fs.readFileSync(path.join(tmp.dir, 'state.db')).toString('latin1'),
  ];
  for (const text of texts) expect(text).not.toContain('SECRET-bot-token');
}

describe('a Slack app channel on the daemon', () => {
  it('one living message per problem: posted, updated in place on resolve after a restart, each change in its thread', async () => {
    let wd = watchdog();
    await cycle(wd);
    const before = parents().length;
    expect(before).toBeGreaterThan(0);

    sim.control.checks.certificates.expire(URL_ID, { inDays: 2 });
    expect(await cycle(wd)).toMatchObject({ sent: 1, failed: 0, retried: 0 });
    const link = linkOf(wd, FINGERPRINT);
    expect(link.status).toBe('open');
    expect(parents()).toHaveLength(before + 1);
    expect(shown(link.ts)).toContain('nova-books-prod');
    expect(shown(link.ts)).toContain('"color":"#d92d20"');
    expect(slack.replies(link.ts)).toHaveLength(1);

    // A restart: the link is in the state file.
    await wd.stop(500);
    open.splice(open.indexOf(wd), 1);
    wd = watchdog();

    sim.control.checks.certificates.renew(URL_ID);
    expect(await cycle(wd)).toMatchObject({ sent: 1, failed: 0 });
    const parent = slack.messages().find((m) => m.ts === link.ts)!;
    expect(parents()).toHaveLength(before + 1);
    expect(parent.edits).toBe(1);
    expect(parent.attachments?.[0]?.color).toBe('#12b76a');
    expect(JSON.stringify(parent.blocks)).toContain('RESOLVED');
    expect(slack.replies(link.ts)).toHaveLength(2);
    expect(JSON.stringify(slack.replies(link.ts)[1])).toContain('RESOLVED');
    expect(linkOf(wd, FINGERPRINT)).toMatchObject({ ts: link.ts, status: 'closed' });
    expect(slack.callsOf('conversations.history')).toHaveLength(0);
    expectNoToken(wd);
  });

  it('ratelimited: the channel waits out Retry-After, then delivers each group once', async () => {
    const wd = watchdog();
    slack.rateLimitNext('chat.postMessage', 30);
    await wd.runOnce(['urls']);
    expect(await wd.deliverDue()).toMatchObject({ sent: 0, retried: 1 });
    expect(wd.store.db.prepare(`SELECT DISTINCT last_error FROM outbox WHERE last_error IS NOT NULL`).all()).toEqual([
      { last_error: 'rate limited (HTTP 429): ratelimited' },
    ]);
    expect(log.text()).toContain('delivery failed; channel paused before the next try');

    clock.advance(29_000);
    expect(await wd.deliverDue()).toMatchObject({ sent: 0, retried: 0 });
    clock.advance(1_000);
    const report = await wd.deliverDue();
    expect(report).toMatchObject({ retried: 0, failed: 0, waiting: 0 });
    const links = wd.store.db.prepare(`SELECT ts FROM slack_app_messages WHERE status = 'open'`).all();
    expect(links).toHaveLength(report.sent);
    expect(parents()).toHaveLength(report.sent);
    expectNoToken(wd);
  });

  it('channel_not_found: permanent, kept, the channel paused, and the reason says what to fix', async () => {
    const wd = watchdog('C0NOWHERE');
    await wd.runOnce(['urls']);
    const report = await wd.deliverDue();
    expect(report).toMatchObject({ sent: 0, failed: 1 });
    expect(report.waiting).toBeGreaterThan(1);
    // One message tried; the rest wait with it, kept, never asked of Slack.
    expect(slack.callsOf('chat.postMessage')).toHaveLength(1);
    const reasons = wd.store.db.prepare(`SELECT DISTINCT status, last_error FROM outbox`).all();
    expect(reasons).toEqual([
      {
        status: 'pending',
        last_error:
          'Slack has no channel C0NOWHERE this app can see (channel_not_found): check the channel ID of ops-app in notify.channels, and invite the app to it if it is private',
      },
      { status: 'pending', last_error: null },
    ]);
    expect(log.text()).toContain('delivery rejected permanently; kept and retried slowly until max_age');
    expectNoToken(wd);
  });
});
