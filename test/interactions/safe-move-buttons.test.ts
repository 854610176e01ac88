/**
 * Restart app, Back up now and Leave maintenance, end to end: a started daemon (ManualClock) reads
 * a stopped app, a failed backup and an app left in maintenance from the simulator, posts their
 * living messages to the fake Slack Web API, and serves its console on loopback. Each button is
 * clicked in Slack (over Socket Mode) and in the console (a form with its CSRF token): a user
 * `interactions.allow.remediate` does not name is refused and nothing is sent; two clicks make one
 * change, with the stored idempotency key; a button is not offered where no policy covers the
 * alert's environment; the console refuses a visitor `server.console.allow.remediate` does not name.
 * The backup taken is read back and the thread says it was verified and copied off-site. A click on
 * a silenced alert acts: a silence holds automatic moves only.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import { createSilence } from '../../src/alerts/silences.js';
import { allInteractions } from '../helpers/interaction-audit.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { listAttempts } from '../../src/remediation/remediation-store.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';
import { call, csrfIn, freePort, type ConsoleDaemon } from '../console/console-fixture.js';
import { buttonOf, startSlackApi, type SlackApi, type SlackApiMessage } from '../helpers/slack-api.js';
import { threadPost } from '../helpers/thread-post.js';
import { appOf } from '../remediation/remediation-fixture.js';

const BOT_TOKEN = 'xoxb-safe-moves-bot-token';
const APP_TOKEN = 'xapp-1-safe-moves-app-token';
const CAROL = { id: 'U0CAROL', username: 'carol' };
const MALLORY = { id: 'U0MALLORY', username: 'mallory' };

let sim: RunningSimulator;
let clock: ManualClock;
let slack: SlackApi;
let tmp: ReturnType<typeof tempDir>;
let wd: Watchdog | undefined;
let port: number;

/** The apps of the test, each with its problem: stopped, a failed backup, in maintenance; one stopped where no policy acts. */
let apps: { stopped: number; backup: number; maintenance: number; elsewhere: number };

beforeEach(async () => {
  ({ sim, clock } = await manualSim({ apps: 30, seed: 7 }));
  slack = await startSlackApi({ token: BOT_TOKEN, appToken: APP_TOKEN, now: () => clock.now() });
  tmp = tempDir();
  port = await freePort();
  apps = {
    stopped: appOf(sim, 'staging', 0),
    backup: appOf(sim, 'staging', 1),
    maintenance: appOf(sim, 'staging', 2),
    elsewhere: appOf(sim, 'development', 0),
  };
  sim.control.checks.app_state.set(apps.stopped, 'stopped');
  sim.control.checks.app_state.set(apps.elsewhere, 'error');
  sim.control.checks.backups.add(apps.backup, { state: 'failed' });
  sim.control.checks.maintenance.set(apps.maintenance, true);
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await slack.close();
  await sim.close();
  tmp.cleanup();
});

/** The daemon, started, with the console's `allow.remediate` as given; its first cycles run and delivered. */
async function daemon(consoleAllow: string): Promise<void> {
  const notify = [
    'notify:',
    '  channels:',
    '    - name: ops-app',
    '      type: slack_app',
    '      bot_token: "${SLACK_BOT_TOKEN}"',
    '      channel: C0ALERTS',
    `      api_url: "${slack.url}"`,
    `      interactions: { mode: socket, app_token: "\${SLACK_APP_TOKEN}", allow: { remediate: { users: [${CAROL.id}] } } }`,
    '  routes: [{ channels: [ops-app] }]',
    '  delivery: { initial_backoff: 10s, timeout: 5s }',
  ].join('\n');
  const staging = 'match: { environment_type: staging }, automatic: false, max_attempts: 2, backoff: 10m';
  const extra = [
    'jobs: { runs: "off", attention: "off", urls: "off", backups: "0 0 1 1 *", maintenance: "0 0 1 1 *", servers: "off", installers: "off", jitter: 0s }',
    'checks: { maintenance: { max_duration: 1m } }',
    'remediation:',
    '  enabled: true',
    '  dry_run: false',
    '  policies:',
    `    - { name: restart, action: apps.restart, ${staging} }`,
    `    - { name: backup, action: apps.backup, problems: [stale, failed, unverified, offsite], ${staging} }`,
    `    - { name: leave, action: apps.maintenance, ${staging} }`,
  ].join('\n');
  const server = `{ listen: "127.0.0.1:${port}", console: { allow: { remediate: ${consoleAllow} } } }`;
  const config = engineConfig(sim, tmp.dir, extra, undefined, notify, server, {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_APP_TOKEN: APP_TOKEN,
  });
  wd = openWatchdog(config, clock);
  await wd.start();
  await slack.connected();
  // Seen in maintenance, then again longer than max_duration later: fired.
  for (let i = 0; i < 2; i++) {
    await wd.runOnce(['backups', 'maintenance']);
    clock.advance(2 * MINUTE);
  }
  await wd.runOnce(['backups', 'maintenance']);
  await wd.deliverDue();
}

const nameOf = (app: number) => sim.control.state.apps.get(app)!.name;
const messageWith = (label: string, app: number): SlackApiMessage | undefined =>
  slack.inChannel().find((m) => !m.thread_ts && buttonOf(m, label, nameOf(app)) !== undefined);

/** The three buttons: the label, the app it is about, the alert's fingerprint, the change it makes. */
const BUTTONS = [
  ['Restart app', 'stopped', (app: number) => `app_state/app/${app}`, 'apps.restart'],
  ['Back up now', 'backup', (app: number) => `backups/app/${app}/failed`, 'apps.backup'],
  ['Leave maintenance', 'maintenance', (app: number) => `maintenance/app/${app}`, 'apps.maintenance'],
] as const;

describe.each(BUTTONS)('%s', (label, which, fingerprintOf, fn) => {
  it('in Slack: refused to a user not allowed, made once for two clicks by one who is', async () => {
    await daemon('anyone');
    const app = apps[which];
    const message = messageWith(label, app);
    expect(message, `a ${label} button beside ${nameOf(app)}`).toBeDefined();
    const value = buttonOf(message, label, nameOf(app))!.value!;
    const click = async (user: { id: string; username: string }) =>
      (await (await slack.clickOverSocket({ user, message: message!, value })).answer).text;

    expect(await click(MALLORY)).toMatch(/^Sorry: to ask for a remediation from Slack here you need to be named/);
    expect(listAttempts(wd!.store)).toEqual([]);
    expect(await click(CAROL)).toMatch(new RegExp(`^${label}: attempt 1 of 2 of policy \\w+ is being sent`));
    expect(await click(CAROL)).toMatch(/^An attempt is already under way.*nothing was sent\.$/);
    await wd!.remediateOnce();
    const [attempt] = listAttempts(wd!.store);
    expect(attempt?.fingerprint).toBe(fingerprintOf(app));
    const sent = sim.control.requests().filter((r) => r.fn === fn);
    expect(sent.map((r) => r.idempotencyKey)).toEqual([attempt!.key]);
    expect(allInteractions(wd!.store).map((r) => [r.slackUser, r.action, r.outcome])).toEqual([
      ['U0MALLORY', 'remediate', 'refused'],
      ['U0CAROL', 'remediate', 'done'],
      ['U0CAROL', 'remediate', 'unchanged'],
    ]);
  });

  it('in the console: a form with its CSRF token, made once for two posts, and refused to a visitor not named', async () => {
    await daemon('{ users: [console@loopback] }');
    const app = apps[which];
    const daemonish = { base: `http://127.0.0.1:${port}` } as ConsoleDaemon;
    const url = `/alert?fp=${encodeURIComponent(fingerprintOf(app))}`;
    const page = await call(daemonish, url);
    expect(page.text).toContain('action="/alerts/remediate"');
    expect(page.text).toContain(`<button>${label}</button>`);
    const csrf = csrfIn(page.text);
    // Without the token: refused, nothing planned.
    expect((await call(daemonish, '/alerts/remediate', { form: { fp: fingerprintOf(app) } })).status).toBe(403);
    expect(listAttempts(wd!.store)).toEqual([]);

    const first = await call(daemonish, '/alerts/remediate', { form: { csrf, fp: fingerprintOf(app) } });
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe(`${url}&done=remediation`);
    const second = await call(daemonish, '/alerts/remediate', { form: { csrf, fp: fingerprintOf(app) } });
    expect(second.status).toBe(409);
    expect(second.text).toContain('An attempt is already under way');
    await wd!.remediateOnce();
    expect(sim.control.requests().filter((r) => r.fn === fn)).toHaveLength(1);
    expect(listAttempts(wd!.store)[0]?.key).toMatch(/^dw-/);
    const after = await call(daemonish, `${url}&done=remediation`);
    expect(after.text).toContain('Asked: the attempt is being sent');
    expect(after.text).toMatch(/remediation acted/);
  });
});

describe('on a silenced alert', () => {
  it('a click in Slack and a post in the console still act: a person is deciding', async () => {
    await daemon('anyone');
    const message = messageWith('Restart app', apps.stopped)!;
    const value = buttonOf(message, 'Restart app', nameOf(apps.stopped))!.value!;
    for (const app of [apps.stopped, apps.backup]) {
      createSilence(wd!.store, {
        matchers: [{ name: 'app', op: '=', value: nameOf(app) }],
        durationMs: 60 * MINUTE,
        reason: 'at work on it',
        createdBy: 'dave',
        now: clock.now(),
      });
    }
    const answer = (await (await slack.clickOverSocket({ user: CAROL, message, value })).answer).text;
    expect(answer).toMatch(/^Restart app: attempt 1 of 2 of policy restart is being sent/);

    const base = { base: `http://127.0.0.1:${port}` } as ConsoleDaemon;
    const fp = `backups/app/${apps.backup}/failed`;
    const page = await call(base, `/alert?fp=${encodeURIComponent(fp)}`);
    const posted = await call(base, '/alerts/remediate', { form: { csrf: csrfIn(page.text), fp } });
    expect(posted.status).toBe(303);
    await wd!.remediateOnce();
    expect(sim.control.requests().filter((r) => r.fn === 'apps.restart' || r.fn === 'apps.backup')).toHaveLength(2);
  });
});

describe('the console’s form while the main thread is blocked', () => {
  it('answers within 3 s that it was asked, and the daemon acts on it once it turns', async () => {
    await daemon('{ users: [console@loopback] }');
    const fp = `app_state/app/${apps.stopped}`;
    const url = `/alert?fp=${encodeURIComponent(fp)}`;
    const page = await call({ base: `http://127.0.0.1:${port}` } as ConsoleDaemon, url);
    const post = await threadPost({
      url: `http://127.0.0.1:${port}/alerts/remediate`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfIn(page.text), fp }).toString(),
      delayMs: 300,
    });
    post.go();
    // This thread is the daemon's main thread: blocked as a statement's Atomics.wait blocks it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5_000);
    const resumedAt = Date.now();
    const answer = await post.result;
    expect(answer.status).toBe(303);
    // Answered after the console's wait for a decision (1.5 s), while the main thread was still blocked.
    expect(answer.at + answer.ms).toBeLessThan(resumedAt);
    // The remediator decides once the main thread turns: one attempt, sent once.
    await vi.waitFor(() => expect(listAttempts(wd!.store)).toHaveLength(1), { timeout: 10_000, interval: 50 });
    await wd!.remediateOnce();
    expect(sim.control.requests().filter((r) => r.fn === 'apps.restart')).toHaveLength(1);
    const after = await call({ base: `http://127.0.0.1:${port}` } as ConsoleDaemon, `${url}&done=remediation-asked`);
    expect(after.text).toContain('Asked: the daemon is busy and decides in a moment');
  });
});

describe('where a button is not offered', () => {
  it('no Restart app for an app of an environment no policy names, in Slack or the console', async () => {
    await daemon('anyone');
    expect(slack.inChannel().some((m) => shown(m).includes(nameOf(apps.elsewhere)))).toBe(true);
    expect(messageWith('Restart app', apps.elsewhere)).toBeUndefined();
    const page = await call({ base: `http://127.0.0.1:${port}` } as ConsoleDaemon, alertUrl(apps.elsewhere));
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('action="/alerts/remediate"');
  });

  it('the console shows no button to a visitor allow.remediate does not name, and refuses the post', async () => {
    await daemon('{ users: [alice] }');
    const base = { base: `http://127.0.0.1:${port}` } as ConsoleDaemon;
    const page = await call(base, alertUrl(apps.stopped));
    expect(page.text).not.toContain('action="/alerts/remediate"');
    const refused = await call(base, '/alerts/remediate', {
      form: { csrf: csrfIn(page.text), fp: `app_state/app/${apps.stopped}` },
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('console@loopback may not ask for a remediation from the console');
    await wd!.remediateOnce();
    expect(sim.control.requests().filter((r) => r.fn === 'apps.restart')).toEqual([]);
    expect(listAttempts(wd!.store)).toEqual([]);
  });
});

describe('the backup taken, read back', () => {
  it("is said in the alert's thread: verified and copied off-site", async () => {
    await daemon('anyone');
    const message = messageWith('Back up now', apps.backup)!;
    const value = buttonOf(message, 'Back up now', nameOf(apps.backup))!.value!;
    await (
      await slack.clickOverSocket({ user: CAROL, message, value })
    ).answer;
    for (let i = 0; i < 20 && listAttempts(wd!.store)[0]?.status !== 'finished'; i++) {
      await wd!.remediateOnce();
      // What it queued delivered before time moves on, so no send outlives its timeout on the clock.
      await wd!.deliverDue();
      clock.advance(MINUTE);
    }
    expect(listAttempts(wd!.store)).toMatchObject([{ outcome: 'succeeded', backupId: expect.any(Number) }]);
    // The outcome follows the notice of its start in the thread: a round each.
    await wd!.deliverDue();
    await wd!.deliverDue();
    expect(slack.replies(message.ts).map(shown)).toContainEqual(
      expect.stringMatching(/Backup taken automatically: backup \S+ \(#\d+\) verified; copied off-site to /),
    );
  });
});

const shown = (m: SlackApiMessage) => JSON.stringify([m.blocks, m.attachments, m.text]);
const alertUrl = (app: number) => `/alert?fp=${encodeURIComponent(`app_state/app/${app}`)}`;
