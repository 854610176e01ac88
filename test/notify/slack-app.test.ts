/**
 * The Slack app channel through the whole notification pipeline (the real lifecycle, outbox and
 * delivery loop on a SQLite file) against the fake Slack Web API on loopback: one living message
 * per alert group, updated in place, every delivery said in its thread; the link kept across a
 * restart; a deleted message replaced; Slack's refusals and rate limits classified like every
 * channel's; the bot token nowhere but in the Authorization header.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackAppChannel } from '../../src/notify/channels/slack-app.js';
import { SlackAppLinkStore } from '../../src/notify/channels/slack-app-link-store.js';
import { LIVING_EVENT_TYPE } from '../../src/notify/channels/slack-app-sender.js';
import { startSlackApi, type SlackApi, type SlackApiMessage } from '../helpers/slack-api.js';
import { finding, Harness, MINUTE, SECOND } from './notify-fixture.js';

const TOKEN = 'xoxb-1111-2222-SECRETsecretSECRET';
const CHANNEL = 'C0ALERTS';

let slack: SlackApi;
let h: Harness | undefined;

beforeEach(async () => {
  slack = await startSlackApi({ token: TOKEN });
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  await slack.close();
});

/** A Slack app channel config pointing at the fake. */
function appTo(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'ops-app', type: 'slack_app', bot_token: TOKEN, channel: CHANNEL, api_url: slack.url, ...extra };
}

function open(extra: Record<string, unknown> = {}, notify: Parameters<typeof Harness.open>[0]['notify'] = {}): Harness {
  h = Harness.open({
    channels: [appTo(extra)],
    notify: {
      delivery: {
        max_age: 60 * MINUTE,
        initial_backoff: 10 * SECOND,
        max_backoff: 5 * MINUTE,
        timeout: 5 * SECOND,
        interval: 5 * SECOND,
      },
      ...notify,
    },
  });
  return h;
}

/** Everything a reader sees of a message, as one string. */
const shown = (m: SlackApiMessage | undefined) => JSON.stringify([m?.text, m?.blocks, m?.attachments]);

/** The messages posted in the channel itself, not as a thread reply (living ones and lone notices). */
const parents = () => slack.inChannel().filter((m) => !m.thread_ts);

/** Delivers a first alert of the failed_runs/production group; answers its living message. */
async function postFirst(harness: Harness): Promise<SlackApiMessage> {
  harness.cycle('runs', [finding('shop')]);
  await harness.notifier.deliverDue();
  return parents()[0]!;
}

/** A remediation's outcome about the first alert, handed to the channel as the remediator hands it. */
function sayOutcome(harness: Harness, title: string): void {
  harness.notifier.notice(
    { type: 'notice', topic: 'remediation', title, severity: 'ok', fingerprint: 'failed_runs/shop' },
    ['ops-app'],
  );
}

/** The living message rows of the state. */
function links(
  harness: Harness,
): { status: string; ts: string | null; group_key: string; closed_reason: string | null }[] {
  return harness.store.db
    .prepare('SELECT status, ts, group_key, closed_reason FROM slack_app_messages ORDER BY id')
    .all() as never;
}

describe('one living message per alert group', () => {
  it('posts it once, updates it in place on a new alert and on resolve, and says each delivery in its thread', async () => {
    const harness = open();
    harness.cycle('runs', [finding('shop', {}, 'critical')]);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });

    const parent = slack.inChannel()[0]!;
    expect(slack.inChannel()).toHaveLength(1);
    expect(shown(parent)).toContain('Problem shop');
    expect(parent?.attachments?.[0]?.color).toBe('#d92d20');
    expect(parent?.metadata?.event_type).toBe(LIVING_EVENT_TYPE);
    // The first delivery is said in the thread too: the thread is the whole history.
    expect(slack.replies(parent.ts)).toHaveLength(1);
    expect(links(harness)).toEqual([
      {
        status: 'open',
        ts: parent.ts,
        group_key: '{"check":"failed_runs","environment_type":"production"}',
        closed_reason: null,
      },
    ]);

    // A second alert of the same group: the same message, updated, and a reply shown in the channel too.
    harness.clock.advance(MINUTE);
    harness.cycle('runs', [finding('shop', {}, 'critical'), finding('crm')]);
    await harness.notifier.deliverDue();
    expect(parents()).toHaveLength(1);
    expect(parent.edits).toBe(1);
    expect(shown(parent)).toContain('Problem crm');
    expect(shown(parent)).toContain('Problem shop');
    const second = slack.replies(parent.ts)[1];
    expect(shown(second)).toContain('Problem crm');
    expect(second?.reply_broadcast).toBe(true);

    // Both resolve: the message turns green and says so; the resolve stays in the thread; the link closes.
    harness.clock.advance(MINUTE);
    harness.cycle('runs', []);
    await harness.notifier.deliverDue();
    expect(parent.edits).toBe(2);
    expect(parent?.attachments?.[0]?.color).toBe('#12b76a');
    expect(JSON.stringify(parent?.blocks)).toContain('RESOLVED');
    expect(shown(parent)).toContain('was: Problem shop');
    const replies = slack.replies(parent.ts);
    expect(replies).toHaveLength(3);
    expect(replies[2]?.reply_broadcast).toBeUndefined();
    expect(links(harness)).toMatchObject([{ status: 'closed', closed_reason: 'every alert in it resolved' }]);

    // The group's next problem is a new message.
    harness.clock.advance(MINUTE);
    harness.cycle('runs', [finding('erp')]);
    await harness.notifier.deliverDue();
    expect(parents()).toHaveLength(2);
    expect(slack.callsOf('chat.postMessage').every((c) => c.encoding === 'form' && c.authorized)).toBe(true);
  });

  it('keeps the link across a restart: the next event updates the same message, no second post', async () => {
    let harness = open();
    const parent = await postFirst(harness);

    harness = h = await harness.restart();
    harness.clock.advance(MINUTE);
    harness.cycle('runs', [finding('shop'), finding('crm')]);
    await harness.notifier.deliverDue();

    expect(parents()).toEqual([parent]);
    expect(parent.edits).toBe(1);
    expect(shown(parent)).toContain('Problem crm');
    expect(slack.callsOf('conversations.history')).toHaveLength(0);
  });

  /** Posts shop's living message, deletes it in Slack, and makes crm fire in the same group a minute on. */
  async function deletedThenCrm(harness: Harness): Promise<SlackApiMessage> {
    const first = await postFirst(harness);
    slack.deleteMessage(first.ts);
    harness.clock.advance(MINUTE);
    harness.cycle('runs', [finding('shop'), finding('crm')]);
    return first;
  }

  /** The group's new living message shows both alerts, not only the one its event was about. */
  function showsWholeGroup(first: SlackApiMessage): SlackApiMessage {
    const second = parents().find((m) => m.ts !== first.ts)!;
    expect(shown(second)).toContain('Problem shop');
    expect(shown(second)).toContain('Problem crm');
    return second;
  }

  it('a message deleted in Slack is replaced: a new living message with the whole group, and the link follows it', async () => {
    const harness = open();
    const first = await deletedThenCrm(harness);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1, failed: 0 });

    const second = showsWholeGroup(first);
    expect(slack.replies(second.ts)).toHaveLength(1);
    expect(links(harness)).toMatchObject([
      { status: 'closed', closed_reason: 'its message can no longer be updated (message_not_found)' },
      { status: 'open', ts: second.ts },
    ]);
  });

  it('a deleted message whose replacement is rate limited is replaced with the whole group all the same', async () => {
    const harness = open();
    const first = await deletedThenCrm(harness);
    slack.rateLimitNext('chat.postMessage', 5);
    expect(await harness.notifier.deliverDue()).toMatchObject({ retried: 1 });
    harness.clock.advance(5 * SECOND);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    showsWholeGroup(first);
  });

  it('a remediation outcome whose thread reply is rate limited is kept on the message once', async () => {
    const harness = open();
    const parent = await postFirst(harness);
    sayOutcome(harness, 'Retried automatically: succeeded');
    slack.rateLimitNext('chat.postMessage', 5);
    expect(await harness.notifier.deliverDue()).toMatchObject({ retried: 1 });
    harness.clock.advance(5 * SECOND);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1 });
    expect(shown(parent).split('Retried automatically: succeeded')).toHaveLength(2);
    expect(slack.replies(parent.ts)).toHaveLength(2);
  });

  it('a remediation outcome about an alert is said in its thread and kept on the message', async () => {
    const harness = open();
    const parent = await postFirst(harness);

    sayOutcome(harness, 'Retried automatically: succeeded');
    await harness.notifier.deliverDue();
    expect(parents()).toHaveLength(1);
    expect(shown(parent)).toContain('*Latest:* Retried automatically: succeeded');
    expect(shown(slack.replies(parent.ts)[1])).toContain('Retried automatically: succeeded');

    // The alert resolves and its message closes; an outcome that comes after is still said there.
    harness.clock.advance(MINUTE);
    harness.cycle('runs', []);
    await harness.notifier.deliverDue();
    expect(links(harness)).toMatchObject([{ status: 'closed' }]);
    sayOutcome(harness, 'Backup taken automatically');
    await harness.notifier.deliverDue();
    expect(parents()).toHaveLength(1);
    expect(shown(slack.replies(parent.ts).at(-1))).toContain('Backup taken automatically');
    expect(shown(parent)).toContain('RESOLVED');
    expect(shown(parent)).toContain('*Latest:* Backup taken automatically');
    expect(links(harness)).toMatchObject([{ status: 'closed' }]);

    // A notice about no alert (a test, the digest) stands alone.
    harness.notifier.notice({ type: 'notice', topic: 'test', title: 'hello' }, ['ops-app']);
    await harness.notifier.deliverDue();
    expect(parents()).toHaveLength(2);
  });
});

describe('refusals and rate limits, as every channel', () => {
  it('ratelimited (HTTP 429, Retry-After): retried after the pause Slack asked for, then delivered once', async () => {
    const harness = open();
    slack.rateLimitNext('chat.postMessage', 30);
    harness.cycle('runs', [finding('shop')]);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 0, retried: 1 });
    expect(harness.rows()).toMatchObject([{ status: 'pending', last_error: 'rate limited (HTTP 429): ratelimited' }]);

    harness.clock.advance(29 * SECOND);
    await harness.notifier.deliverDue();
    expect(slack.callsOf('chat.postMessage')).toHaveLength(1);

    harness.clock.advance(SECOND);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1, waiting: 0 });
    expect(slack.inChannel()).toHaveLength(1);
    // A refused post posted nothing: its intent was dropped, and nothing was looked for.
    expect(slack.callsOf('conversations.history')).toHaveLength(0);
    expect(links(harness)).toMatchObject([{ status: 'open' }]);
  });

  it("a new message's thread reply rate limited: the retry replies once, in the thread only", async () => {
    const harness = open();
    slack.rateLimitNext('chat.postMessage', 5, 1, 1);
    harness.cycle('runs', [finding('shop')]);
    expect(await harness.notifier.deliverDue()).toMatchObject({ retried: 1 });
    harness.clock.advance(5 * SECOND);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1 });
    // The message itself is the news: its reply is not said in the channel a second time.
    expect(slack.inChannel()).toHaveLength(1);
    expect(slack.replies(parents()[0]!.ts)).toHaveLength(1);
  });

  it('a thread reply rate limited after the update: the retry updates again and replies once', async () => {
    const harness = open();
    const parent = await postFirst(harness);

    harness.clock.advance(MINUTE);
    harness.cycle('runs', []);
    slack.rateLimitNext('chat.postMessage', 5);
    expect(await harness.notifier.deliverDue()).toMatchObject({ retried: 1 });
    harness.clock.advance(5 * SECOND);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1 });

    expect(parent.edits).toBe(2);
    expect(slack.replies(parent.ts)).toHaveLength(2);
    expect(parents()).toHaveLength(1);
  });

  it.each([
    {
      error: 'channel_not_found',
      says: 'Slack has no channel C0ALERTS this app can see (channel_not_found): check the channel ID of ops-app in notify.channels',
    },
    { error: 'not_in_channel', says: 'the app is not a member of channel C0ALERTS (not_in_channel): invite it there' },
    {
      error: 'is_archived',
      says: 'channel C0ALERTS is archived (is_archived): unarchive it, or give ops-app another channel',
    },
    { error: 'invalid_auth', says: 'Slack refused the bot token (invalid_auth): check bot_token of ops-app' },
    {
      error: 'account_inactive',
      says: 'the bot token belongs to a deactivated app or user (account_inactive): reinstall the app',
    },
    { error: 'token_revoked', says: 'the bot token was revoked (token_revoked): reinstall the app to the workspace' },
    { error: 'restricted_action', says: 'the workspace does not let this app post in C0ALERTS (restricted_action)' },
    { error: 'something_new', says: 'Slack refused the call (something_new)' },
    { error: 'internal_error', says: 'Slack had an internal error (internal_error)', retried: true },
    { error: 'service_unavailable', says: 'Slack is unavailable (service_unavailable)', retried: true },
  ])(
    '$error: a reason that says what to fix; retried at once only when it may pass',
    async ({ error, says, retried }) => {
      const harness = open();
      slack.failNext('chat.postMessage', error);
      harness.cycle('runs', [finding('shop')]);
      expect(await harness.notifier.deliverDue()).toMatchObject(retried ? { retried: 1 } : { sent: 0, failed: 1 });
      const [row] = harness.rows();
      // Permanent or not, the row is kept (a fixed config still delivers it).
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row?.last_error).toContain(says);
      if (!retried) expect(harness.log.text()).toContain('delivery rejected permanently');
      // Refused, so nothing was posted: no intent is left for a restart to look for.
      expect(links(harness)).toEqual([]);
    },
  );

  it('a revoked bot token pauses the whole channel: Slack is asked once a round, not once per message', async () => {
    const harness = open({ bot_token: 'xoxb-revoked-token-value' });
    // Three groups: three living messages due in one round.
    harness.cycle('runs', [
      finding('shop'),
      finding('crm', { check: 'stuck_runs' }),
      finding('erp', { check: 'servers' }),
    ]);
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 0, failed: 1, waiting: 3 });
    expect(slack.callsOf('chat.postMessage')).toHaveLength(1);
    harness.clock.advance(10 * SECOND);
    await harness.notifier.deliverDue();
    expect(slack.callsOf('chat.postMessage')).toHaveLength(1);
  });

  it('a refusal of the channel a message was left in (the config moved) pauses nothing: the notice stands alone', async () => {
    await slack.close();
    slack = await startSlackApi({ token: TOKEN, channels: [CHANNEL, 'C0NEW'] });
    const before = open();
    await postFirst(before);
    await before.close({ keepDir: true });
    const harness = (h = Harness.open({
      channels: [appTo({ channel: 'C0NEW' })],
      dir: before.dir,
      state: before.state,
      clock: before.clock,
    }));
    // The old channel archived: its message can no longer be updated.
    slack.failNext('chat.update', 'is_archived');
    sayOutcome(harness, 'Retried automatically: succeeded');
    expect(await harness.notifier.deliverDue()).toMatchObject({ sent: 1, failed: 0 });
    expect(slack.inChannel('C0NEW').map(shown)).toEqual([expect.stringContaining('Retried automatically: succeeded')]);
  });

  it('missing_scope names the scope Slack says is needed', async () => {
    const harness = open();
    slack.failNext('chat.postMessage', 'missing_scope', {
      extra: { needed: 'chat:write', provided: 'channels:history' },
    });
    harness.cycle('runs', [finding('shop')]);
    await harness.notifier.deliverDue();
    expect(harness.rows()[0]?.last_error).toBe(
      'the app lacks the scope chat:write (it has: channels:history) (missing_scope): add it under OAuth & Permissions and reinstall the app',
    );
  });

  it('at start, a bot token Slack refuses is an error naming the channel, never the token', async () => {
    const harness = Harness.open({ channels: [appTo({ bot_token: 'xoxb-wrong-token-value' })] });
    h = harness;
    harness.notifier.start();
    await expect.poll(() => harness.log.text(), { timeout: 10_000 }).toContain('channel ops-app cannot deliver');
    const line = harness.log.lines.find((l) => l.includes('cannot deliver'))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 50,
      channel: 'ops-app',
      reason: "Slack refused the bot token (invalid_auth): check bot_token of ops-app (the app's xoxb- token)",
    });
    expect(harness.log.text()).not.toContain('xoxb-wrong-token-value');
    await harness.notifier.stop();
  });

  it('at start, a good token is said once, at info', async () => {
    const harness = open();
    harness.notifier.start();
    await expect.poll(() => harness.log.text(), { timeout: 10_000 }).toContain('Slack accepted the bot token');
    expect(slack.callsOf('auth.test')).toMatchObject([{ authorized: true }]);
    await harness.notifier.stop();
  });
});

describe('the bot token', () => {
  it('appears in no log line, no outbox row, no message, no call the fake recorded and nowhere in the state file', async () => {
    const harness = open();
    slack.failNext('chat.postMessage', 'invalid_auth');
    harness.cycle('runs', [finding('shop')]);
    await harness.notifier.deliverDue();
    harness.clock.advance(5 * MINUTE);
    await harness.notifier.deliverDue();
    harness.clock.advance(MINUTE);
    harness.cycle('runs', []);
    await harness.notifier.deliverDue();
    expect(slack.inChannel().length).toBeGreaterThan(0);

    const store = harness.store;
    store.db.checkpoint();
    const texts = [
      harness.log.text(),
      JSON.stringify(harness.rows()),
      JSON.stringify(slack.messages()),
      JSON.stringify(slack.calls),
      fs.readFileSync(path.join(harness.dir, 'state.db')).toString('latin1'),
    ];
    for (const text of texts) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('SECRETsecret');
    }
  });
});

describe('seams for the interactions', () => {
  it('finds the living message of an alert and renders it again with a note', async () => {
    const harness = open();
    const parent = await postFirst(harness);
    const channel = harness.channels.get('ops-app') as SlackAppChannel;

    const links = new SlackAppLinkStore(harness.store);
    expect(links.forAlert('ops-app', 'failed_runs/shop')).toMatchObject({
      slackChannel: CHANNEL,
      ts: parent.ts,
      groupKey: '{"check":"failed_runs","environment_type":"production"}',
      status: 'open',
    });
    expect(links.forAlert('ops-app', 'failed_runs/nothing')).toBeUndefined();
    expect(channel.livingMessageAt(CHANNEL, parent.ts)).toEqual({
      open: true,
      fingerprints: ['failed_runs/shop'],
    });
    expect(channel.livingMessageAt(CHANNEL, slack.replies(parent.ts)[0]!.ts)).toBeUndefined();
    expect(await channel.refresh('failed_runs/shop', 'Acknowledged by @alice')).toEqual({ outcome: 'ok' });
    expect(shown(parent)).toContain('*Latest:* Acknowledged by @alice');
    expect(await channel.refresh('failed_runs/nothing')).toMatchObject({ outcome: 'permanent' });
  });
});

describe('a click shown while Slack refuses the update', () => {
  it('keeps its note: the next update of the message shows what was done', async () => {
    const harness = open();
    const parent = await postFirst(harness);
    const channel = harness.channels.get('ops-app') as SlackAppChannel;
    slack.rateLimitNext('chat.update', 30);
    expect(await channel.refresh('failed_runs/shop', 'Silenced for 4h by bob (U0BOB) in Slack')).toMatchObject({
      outcome: 'retryable',
    });
    harness.clock.advance(MINUTE);
    harness.cycle('runs', [finding('shop'), finding('crm')]);
    await harness.notifier.deliverDue();
    expect(shown(parent)).toContain('Problem crm');
    expect(shown(parent)).toContain('Silenced for 4h by bob (U0BOB) in Slack');
  });
});
