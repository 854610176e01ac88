/**
 * The Slack app's buttons end to end, over Socket Mode and over HTTP: the daemon (started, on a
 * ManualClock) reads a failed staging run from the simulator and posts its living message to the
 * fake Slack Web API with its buttons; clicks come back the way the config says (an envelope on
 * the fake's Socket Mode WebSocket, or a post signed with the signing secret to the daemon's own
 * listener), and are answered at their response URL. An unauthorised user is refused and audited;
 * Acknowledge stops the repeats and the message shows who; Silence mutes the next notification;
 * Retry now acts once (the simulator sees one retry with the stored idempotency key after two
 * clicks); a click on the message once its alert is over changes nothing. No token or secret is
 * in a log line, the state file, the audit or what Slack was sent. A click over HTTP is answered
 * by the listener's own thread within Slack's 3 s while the main thread is blocked, and acted on
 * once it turns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventsOfAlert, alertStoreOf } from '../../src/alerts/alert-store.js';
import { expireSilence, listSilences } from '../../src/alerts/silences.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { allInteractions } from '../helpers/interaction-audit.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { listAttempts } from '../../src/remediation/remediation-store.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';
import { freePort } from '../console/console-fixture.js';
import { buttonOf, startSlackApi, type Click, type SlackApi, type SlackApiMessage } from '../helpers/slack-api.js';
import { threadPost } from '../helpers/thread-post.js';
import { startThreadSocket } from '../helpers/thread-socket.js';
import { SocketModeThread } from '../../src/interactions/socket-mode-thread.js';
import { LogCapture } from '../notify/notify-fixture.js';
import { appOf } from '../remediation/remediation-fixture.js';

const HOUR = 60 * MINUTE;
const BOT_TOKEN = 'xoxb-buttons-SECRET-bot-token';
const APP_TOKEN = 'xapp-1-buttons-SECRET-app-token';
const SIGNING_SECRET = 'buttons-SECRET-signing-secret-0123';
const ALICE = { id: 'U0ALICE', username: 'alice' };
const BOB = { id: 'U0BOB', username: 'bob' };
const CAROL = { id: 'U0CAROL', username: 'carol' };
const MALLORY = { id: 'U0MALLORY', username: 'mallory' };

type Mode = 'socket' | 'http';

// A daemon's whole story, from the sources: 5 s on a quiet machine, past 30 s at a load of 20.
vi.setConfig({ testTimeout: 120_000 });

let sim: RunningSimulator;
let clock: ManualClock;
let slack: SlackApi;
let tmp: ReturnType<typeof tempDir>;
let log: LogCapture;
let wd: Watchdog | undefined;
let port: number;

beforeEach(async () => {
  ({ sim, clock } = await manualSim({ apps: 12, seed: 7 }));
  slack = await startSlackApi({
    token: BOT_TOKEN,
    appToken: APP_TOKEN,
    usergroups: { S0ONCALL: [BOB.id] },
    now: () => clock.now(),
  });
  tmp = tempDir();
  log = new LogCapture();
  port = await freePort();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await slack.close();
  await sim.close();
  tmp.cleanup();
});

/** The daemon's config: a Slack app channel taking its clicks as `mode` says, with that app token. */
function configOf(mode: Mode, appToken = APP_TOKEN) {
  const interactions =
    mode === 'socket'
      ? 'mode: socket, app_token: "${SLACK_APP_TOKEN}"'
      : 'mode: http, signing_secret: "${SLACK_SIGNING_SECRET}"';
  const notify = [
    'notify:',
    '  channels:',
    '    - name: ops-app',
    '      type: slack_app',
    '      bot_token: "${SLACK_BOT_TOKEN}"',
    '      channel: C0ALERTS',
    `      api_url: "${slack.url}"`,
    `      interactions: { ${interactions}, allow: { silence: { usergroups: [S0ONCALL] }, remediate: { users: [${CAROL.id}] } } }`,
    '  routes: [{ channels: [ops-app] }]',
    '  delivery: { initial_backoff: 10s, timeout: 5s }',
  ].join('\n');
  const extra = [
    'alerts: { repeat_interval: 1h }',
    // One cycle at start; the test runs the others.
    'jobs: { runs: "0 0 1 1 *", attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
    'remediation:',
    '  enabled: true',
    '  dry_run: false',
    '  policies:',
    '    - { name: retry-asked, action: runs.retry, match: { environment_type: staging }, automatic: false, max_attempts: 1, backoff: 10m }',
  ].join('\n');
  return engineConfig(
    sim,
    tmp.dir,
    extra,
    undefined,
    notify,
    `{ listen: "127.0.0.1:${port}", console: { public_url: "https://watchdog.example.com" } }`,
    { SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_APP_TOKEN: appToken, SLACK_SIGNING_SECRET: SIGNING_SECRET },
  );
}

/**
 * The daemon of {@link configOf}, started; over Socket Mode once its connection was greeted
 * (`connected`: by a peer other than the fake's own).
 */
async function daemon(mode: Mode, connected = () => slack.connected()): Promise<Watchdog> {
  wd = openWatchdog(configOf(mode), clock, { logger: log.logger });
  await wd.start();
  if (mode === 'socket') await connected();
  return wd;
}

/** A minute of the daemon: one cycle of the runs job, then what is due delivered. */
async function minute(): Promise<void> {
  await wd!.runOnce(['runs']);
  await wd!.deliverDue();
}

/** Clicks the button labelled `label` on `message` as `user`, the way the mode says; answers what the daemon said. */
async function click(mode: Mode, user: { id: string; username: string }, message: SlackApiMessage, label: string) {
  const button = buttonOf(message, label);
  expect(button?.value, `a ${label} button`).toBeDefined();
  return clickValue(mode, user, message, button!.value!);
}

/** A click handing back `value`: a button as a Slack client still showed it. */
async function clickValue(mode: Mode, user: { id: string; username: string }, message: SlackApiMessage, value: string) {
  const spec = { user, message, value };
  let made: Click;
  if (mode === 'socket') {
    made = await slack.clickOverSocket(spec);
  } else {
    const posted = await slack.clickOverHttp(`http://127.0.0.1:${port}/slack/interactions`, SIGNING_SECRET, spec);
    expect(posted.status).toBe(200);
    made = posted.click;
  }
  return (await made.answer).text;
}

/** The living message as Slack shows it now. */
const living = (ts: string) => slack.messages().find((m) => m.ts === ts)!;
const shownText = (m: SlackApiMessage) => JSON.stringify([m.blocks, m.attachments]);
/** Waits for the living message to show `text`: the person is answered at once, the message once Slack takes its update. */
const showsSoon = (ts: string, text: string) => vi.waitFor(() => expect(shownText(living(ts))).toContain(text));

/** Nowhere a token or the signing secret may be. */
function expectNoSecrets(): void {
  wd!.store.db.checkpoint();
  const places = [
    log.text(),
    JSON.stringify(slack.messages()),
    JSON.stringify(slack.calls),
    JSON.stringify(slack.answers),
    JSON.stringify(allInteractions(wd!.store)),
    fs.readFileSync(path.join(tmp.dir, 'state.db')).toString('latin1'),
  ];
  for (const text of places) expect(text).not.toMatch(/SECRET/);
}

describe.each<Mode>(['socket', 'http'])('the living message’s buttons, clicked over %s', (mode) => {
  it('refuse the unauthorised, acknowledge (no more repeats), silence (the next one muted), retry once, and a late click changes nothing', async () => {
    const run = sim.control.addRun({
      appId: appOf(sim, 'staging'),
      action: 'update',
      state: 'error',
      failedStep: 'build_image',
      reason: 'pip install failed',
    });
    const fingerprint = `failed_runs/run/${run.id}`;
    await daemon(mode);
    await minute();
    const parent = slack.inChannel().find((m) => !m.thread_ts && shownText(m).includes(`run%2F${run.id}`))!;
    expect(parent, 'the living message').toBeDefined();
    expect(buttonOf(parent, 'Open in console')?.url).toBe(
      `https://watchdog.example.com/alert?fp=failed_runs%2Frun%2F${run.id}`,
    );
    const replies = () => slack.replies(parent.ts).length;
    expect(replies()).toBe(1);
    const acknowledgeAsFirstShown = buttonOf(parent, 'Acknowledge')!.value!;

    // Mallory may not silence: refused politely, audited, nothing made.
    expect(await click(mode, MALLORY, living(parent.ts), 'Silence 1h')).toMatch(
      /^Sorry: to silence alerts from Slack here you need to be named/,
    );
    expect(listSilences(wd!.store, { now: clock.now() })).toEqual([]);

    // Alice acknowledges (anyone may): the message says who, the repeats stop.
    expect(await click(mode, ALICE, living(parent.ts), 'Acknowledge')).toMatch(/^Acknowledged by alice \(U0ALICE\)/);
    expect(alertStoreOf(wd!.store).get(fingerprint)?.acknowledgement).toMatchObject({
      by: 'alice (U0ALICE)',
      via: 'slack',
    });
    await showsSoon(parent.ts, 'Acknowledged by alice (U0ALICE) in Slack');
    await wd!.deliverDue();
    expect(shownText(living(parent.ts))).toContain('acknowledged by alice (U0ALICE)');
    expect(buttonOf(living(parent.ts), 'Unacknowledge')).toBeDefined();
    const afterAck = replies();
    for (let i = 0; i < 3; i++) {
      clock.advance(HOUR);
      await minute();
    }
    expect(replies()).toBe(afterAck);
    expect(eventsOfAlert(wd!.store, fingerprint).map((e) => e.kind)).toEqual(['firing', 'acknowledged']);

    // Alice gives it back, Bob (of the on-call group) silences it for 4h: the repeat now due is held.
    expect(await click(mode, ALICE, living(parent.ts), 'Unacknowledge')).toMatch(/is given back/);
    expect(await click(mode, BOB, living(parent.ts), 'Silence 4h')).toMatch(/^Silenced for 4h, until /);
    expect(listSilences(wd!.store, { now: clock.now() })).toMatchObject([
      {
        createdBy: 'slack:bob (U0BOB)',
        matchers: expect.arrayContaining([{ name: 'check', op: '=', value: 'failed_runs' }]),
      },
    ]);
    await minute();
    const repeat = wd!.store.db
      .prepare(`SELECT decision FROM outbox WHERE fingerprint = ? AND kind = 'repeat'`)
      .all(fingerprint);
    expect(repeat).toEqual([{ decision: 'silenced' }]);
    expect(shownText(living(parent.ts))).toContain('Silenced for 4h by bob (U0BOB) in Slack');
    // A second click while in force for as long changes nothing.
    expect(await click(mode, BOB, living(parent.ts), 'Silence 1h')).toMatch(/^Already silenced until .* by slack:bob/);
    // The group's members asked of Slack for Mallory, then again for Bob three hours later (the cache
    // keeps them 5m): his second click asked nothing.
    expect(slack.callsOf('usergroups.users.list')).toHaveLength(2);

    // Carol asks for a retry twice: one attempt, one request the simulator sees, with its key.
    expect(await click(mode, CAROL, living(parent.ts), 'Retry now')).toMatch(/^Retry now: attempt 1 of 1/);
    expect(await click(mode, CAROL, living(parent.ts), 'Retry now')).toMatch(/nothing was sent\.$/);
    await wd!.remediateOnce();
    const [attempt] = listAttempts(wd!.store);
    const retries = sim.control.requests().filter((r) => r.fn === 'runs.retry');
    expect(retries.map((r) => r.idempotencyKey)).toEqual([attempt!.key]);
    expect(shownText(living(parent.ts))).toContain(
      `Retry now asked by carol (U0CAROL) in Slack: attempt 1 of 1 (key ${attempt!.key})`,
    );
    // Sent and accepted: its start is said in the alert's thread before its outcome.
    await wd!.deliverDue();
    expect(slack.replies(parent.ts).map(shownText)).toContainEqual(
      expect.stringMatching(/Automatic retry: sent, (following run #\d+|looking for its run)/),
    );

    // Bob's silence is ended in the console; the run goes through: the alert resolves and the
    // message closes (green). A late click on it changes nothing.
    const [silence] = listSilences(wd!.store, { now: clock.now() });
    expireSilence(wd!.store, silence!.id, clock.now(), { by: 'console@loopback', reason: 'retried' });
    clock.advance(10 * MINUTE);
    await wd!.remediateOnce();
    await minute();
    // A round the loop began before the resolve was written may have answered that call: one more.
    await wd!.deliverDue();
    expect(alertStoreOf(wd!.store).get(fingerprint)?.status).toBe('resolved');
    expect(living(parent.ts).attachments?.[0]?.color).toBe('#12b76a');
    const before = eventsOfAlert(wd!.store, fingerprint).length;
    expect(buttonOf(living(parent.ts), 'Acknowledge')).toBeUndefined();
    expect(await clickValue(mode, ALICE, parent, acknowledgeAsFirstShown)).toMatch(/^This message is over/);
    expect(eventsOfAlert(wd!.store, fingerprint)).toHaveLength(before);

    expect(allInteractions(wd!.store).map((r) => [r.slackUser, r.action, r.outcome])).toEqual([
      ['U0MALLORY', 'silence_1h', 'refused'],
      ['U0ALICE', 'acknowledge', 'done'],
      ['U0ALICE', 'unacknowledge', 'done'],
      ['U0BOB', 'silence_4h', 'done'],
      ['U0BOB', 'silence_1h', 'unchanged'],
      ['U0CAROL', 'remediate', 'done'],
      ['U0CAROL', 'remediate', 'unchanged'],
      ['U0ALICE', 'acknowledge', 'stale'],
    ]);
    expect(log.text()).toContain('Slack button click refused');
    // The console's timeline of the alert shows every click, the refused and the late one too.
    const page = await (await fetch(`http://127.0.0.1:${port}/alert?fp=${encodeURIComponent(fingerprint)}`)).text();
    const timeline = page.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(timeline).toContain('slack silence 1h by mallory (U0MALLORY) in ops-app : refused');
    expect(timeline).toContain('slack remediate by carol (U0CAROL) in ops-app : done');
    expect(timeline).toContain('slack acknowledge by alice (U0ALICE) in ops-app : stale');
    expectNoSecrets();
  });
});

describe('clicks over HTTP', () => {
  it("are taken only signed with the app's secret and fresh: a tampered body or an old timestamp is refused and changes nothing", async () => {
    const run = sim.control.addRun({ appId: appOf(sim, 'staging'), action: 'update', state: 'error' });
    await daemon('http');
    await minute();
    const parent = slack.inChannel().find((m) => !m.thread_ts && shownText(m).includes(`run%2F${run.id}`))!;
    const spec = { user: ALICE, message: parent, value: buttonOf(parent, 'Acknowledge')!.value! };
    const url = `http://127.0.0.1:${port}/slack/interactions`;
    const nowSeconds = Math.floor(clock.now() / 1000);

    expect((await slack.clickOverHttp(url, SIGNING_SECRET, spec, { tamper: true })).status).toBe(401);
    expect((await slack.clickOverHttp(url, SIGNING_SECRET, spec, { timestamp: nowSeconds - 6 * 60 })).status).toBe(401);
    expect((await slack.clickOverHttp(url, 'another-apps-signing-secret-000', spec)).status).toBe(401);
    expect(alertStoreOf(wd!.store).get(`failed_runs/run/${run.id}`)?.acknowledgement).toBeNull();
    expect(allInteractions(wd!.store)).toEqual([]);
    expect(slack.answers).toEqual([]);
    expect(log.text()).toContain('Slack interaction refused');

    // Signed with the secret, within five minutes: taken.
    const taken = await slack.clickOverHttp(url, SIGNING_SECRET, spec, { timestamp: nowSeconds - 4 * 60 });
    expect(taken.status).toBe(200);
    expect((await taken.click.answer).text).toMatch(/^Acknowledged by alice/);
    // A value this version did not make (edited by hand, or an older release's): answered, nothing done.
    for (const value of ['silence_3650d:1a2b3c4d', "acknowledge:1' OR 1=1; --", 'acknowledge:<!channel>']) {
      const edited = await slack.clickOverHttp(url, SIGNING_SECRET, { ...spec, value });
      expect(edited.status).toBe(200);
      expect((await edited.click.answer).text).toMatch(/^That button is not one this deploy-watchdog knows/);
    }
    expect(listSilences(wd!.store, { now: clock.now() })).toEqual([]);
    // No channel takes clicks over Socket Mode: its thread never started.
    expect(SocketModeThread.of(wd!.store, log.logger).running).toBe(false);
    expectNoSecrets();
  });

  it('are answered 200 within 3 s while the main thread is blocked for 5 s, and acted on once it turns', async () => {
    const run = sim.control.addRun({ appId: appOf(sim, 'staging'), action: 'update', state: 'error' });
    await daemon('http');
    await minute();
    const parent = slack.inChannel().find((m) => !m.thread_ts && shownText(m).includes(`run%2F${run.id}`))!;
    const made = slack.signedClick(SIGNING_SECRET, {
      user: ALICE,
      message: parent,
      value: buttonOf(parent, 'Acknowledge')!.value!,
    });
    const post = await threadPost({
      url: `http://127.0.0.1:${port}/slack/interactions`,
      headers: made.headers,
      body: made.body,
      delayMs: 300,
    });
    // This thread is the daemon's main thread: blocked as a statement's Atomics.wait blocks it.
    post.go();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5_000);
    const resumedAt = Date.now();
    const posted = await post.result;
    expect(posted).toMatchObject({ status: 200, body: '' });
    // Answered while the main thread was still blocked; relayed to it, the answer would take > 4.7 s.
    expect(posted.at + posted.ms).toBeLessThan(resumedAt);
    expect(posted.ms).toBeLessThan(3_000);
    // The work is the main thread's, once it turns: the alert acknowledged, the message updated,
    // the person answered at the click's response URL.
    expect((await made.click.answer).text).toMatch(/^Acknowledged by alice \(U0ALICE\)/);
    expect(alertStoreOf(wd!.store).get(`failed_runs/run/${run.id}`)?.acknowledgement).toMatchObject({
      by: 'alice (U0ALICE)',
    });
    await showsSoon(parent.ts, 'Acknowledged by alice (U0ALICE) in Slack');
    expectNoSecrets();
  });
});

describe('clicks over Socket Mode', () => {
  it('are acknowledged within 3 s while the main thread is blocked for 5 s, and acted on once it turns', async () => {
    // Slack's side of the connection on a thread of its own: this one is about to block.
    const peer = await startThreadSocket();
    try {
      slack.handSocketsTo(peer.url);
      const run = sim.control.addRun({ appId: appOf(sim, 'staging'), action: 'update', state: 'error' });
      await daemon('socket', () => peer.connected());
      await minute();
      const parent = slack.inChannel().find((m) => !m.thread_ts && shownText(m).includes(`run%2F${run.id}`))!;
      const made = slack.socketClick({ user: ALICE, message: parent, value: buttonOf(parent, 'Acknowledge')!.value! });
      const acked = peer.send(made.envelope, made.envelopeId, 300);
      // This thread is the daemon's main thread: blocked as a statement's Atomics.wait blocks it.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5_000);
      const resumedAt = Date.now();
      const ack = await acked;
      // Acknowledged while the main thread was still blocked; on it, the ack would take > 4.7 s.
      expect(ack.at + ack.ms).toBeLessThan(resumedAt);
      expect(ack.ms).toBeLessThan(3_000);
      // The work is the main thread's, once it turns, as for a click over HTTP.
      expect((await made.click.answer).text).toMatch(/^Acknowledged by alice \(U0ALICE\)/);
      expect(alertStoreOf(wd!.store).get(`failed_runs/run/${run.id}`)?.acknowledgement).toMatchObject({
        by: 'alice (U0ALICE)',
      });
      await showsSoon(parent.ts, 'Acknowledged by alice (U0ALICE) in Slack');
      expectNoSecrets();
    } finally {
      await peer.close();
    }
  });

  it('keep their connection through a reload of the same app token, connect again with a new one, and end their thread at the stop', async () => {
    const run = sim.control.addRun({ appId: appOf(sim, 'staging'), action: 'update', state: 'error' });
    await daemon('socket');
    await minute();
    const parent = slack.inChannel().find((m) => !m.thread_ts && shownText(m).includes(`run%2F${run.id}`))!;
    const thread = SocketModeThread.of(wd!.store, log.logger);
    expect(thread.running).toBe(true);

    // The same app: the connection stays, and the new configuration takes its clicks.
    await wd!.reload(configOf('socket'));
    expect(await click('socket', ALICE, living(parent.ts), 'Acknowledge')).toMatch(/^Acknowledged by alice/);
    expect([slack.connections, slack.openSockets]).toEqual([1, 1]);

    // The token rotated: the old connection closes, one opens with the new token, and clicks come on it.
    const rotated = 'xapp-1-buttons-SECRET-rotated-token';
    slack.setAppToken(rotated);
    await wd!.reload(configOf('socket', rotated));
    await slack.connected(2);
    await vi.waitFor(() => expect(slack.openSockets).toBe(1), { timeout: 15_000 });
    expect(slack.callsOf('apps.connections.open').at(-1)?.authorized).toBe(true);
    expect(await click('socket', ALICE, living(parent.ts), 'Unacknowledge')).toMatch(/is given back/);

    // The stop closes the connection and ends the thread.
    await wd!.stop(1_000);
    wd = undefined;
    expect(thread.running).toBe(false);
    await vi.waitFor(() => expect(slack.openSockets).toBe(0), { timeout: 15_000 });
    expect(log.text()).not.toMatch(/SECRET/);
  });
});
