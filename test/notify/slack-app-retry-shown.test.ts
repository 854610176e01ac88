/**
 * A run being retried, as the people watching see it (issue 22, "Run lineage"): the daemon (started,
 * on a ManualClock, reading the simulator) tells a failed production run in its Slack app living
 * message; a person retries the run (runs.retry: the same run goes back to running), and the next
 * cycle says "retrying since …, step …" in that message and its thread, once, with no new message
 * and no page; the console's alert page says it too. The retry's success then resolves the alert
 * in the same message. A silenced alert, which no message shows, is retried without a word in Slack.
 *
 * And a failed run the service retries by itself, within `checks.failed_runs.retrying_grace`: the
 * console gives the true reason it is held (the service's retry, then the run running again), never
 * `alerts.for`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSilence } from '../../src/alerts/silences.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';
import { freePort } from '../console/console-fixture.js';
import { startSlackApi, type SlackApi, type SlackApiMessage } from '../helpers/slack-api.js';
import { apiPost } from '../helpers/simulator.js';
import { request } from 'undici';

const BOT_TOKEN = 'xoxb-retry-shown-bot-token';

let sim: RunningSimulator;
let clock: ManualClock;
let slack: SlackApi;
let tmp: ReturnType<typeof tempDir>;
let wd: Watchdog | undefined;
let port: number;

beforeEach(async () => {
  ({ sim, clock } = await manualSim({ apps: 12, seed: 3 }));
  slack = await startSlackApi({ token: BOT_TOKEN, now: () => clock.now() });
  tmp = tempDir();
  port = await freePort();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await slack.close();
  await sim.close();
  tmp.cleanup();
});

/**
 * The daemon with a Slack app channel, routed the alerts of app `appId` alone (the seed estate has
 * failures of its own), and its console, started; only the runs job, run by the test.
 */
async function daemon(appId: number): Promise<Watchdog> {
  const app = sim.control.state.apps.get(appId)!.name;
  const notify = [
    'notify:',
    '  channels:',
    '    - name: ops-app',
    '      type: slack_app',
    '      bot_token: "${SLACK_BOT_TOKEN}"',
    '      channel: C0ALERTS',
    `      api_url: "${slack.url}"`,
    '    - { name: the-rest, type: log }',
    `  routes: [{ match: { app: "${app}" }, channels: [ops-app] }, { channels: [the-rest] }]`,
    '  delivery: { initial_backoff: 10s, timeout: 5s }',
  ].join('\n');
  const extra = [
    'alerts: { repeat_interval: 1h }',
    'jobs: { runs: "0 0 1 1 *", attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
  ].join('\n');
  const config = engineConfig(sim, tmp.dir, extra, undefined, notify, `{ listen: "127.0.0.1:${port}" }`, {
    SLACK_BOT_TOKEN: BOT_TOKEN,
  });
  wd = openWatchdog(config, clock, {});
  await wd.start();
  return wd;
}

/** One cycle of the runs job, then what is due delivered. */
async function cycle(): Promise<void> {
  await wd!.runOnce(['runs']);
  await wd!.deliverDue();
}

/**
 * A run of an app of `environment` with no other run failed or under way (its failure is the
 * test's alone), failed at step restart: for good, or `retrying` by itself.
 */
function failedRun(environment: 'production' | 'staging', retrying = false): { appId: number; id: number } {
  const busy = new Set([...sim.control.state.runs.values()].filter((r) => r.state !== 'done').map((r) => r.appId));
  const app = [...sim.control.state.apps.values()].find((a) => a.envType === environment && !busy.has(a.id));
  if (!app) throw new Error(`no quiet ${environment} app`);
  const reason = retrying ? {} : { reason: 'x' };
  const run = sim.control.addRun({
    appId: app.id,
    action: 'update',
    state: 'error',
    failedStep: 'restart',
    retrying,
    ...reason,
  });
  return { appId: app.id, id: run.id };
}

/** A person retries run `id` through the API, as the reference's change does. */
async function retryByHand(id: number): Promise<void> {
  const answer = await apiPost(sim, `/runs/${id}/retry`, {});
  expect(answer.body.data).toMatchObject({ state: 'started', run_id: id });
}

/** The console's page of an alert, as text (its markup's tags dropped). */
async function alertPageText(fingerprint: string): Promise<string> {
  const res = await request(`http://127.0.0.1:${port}/alert?fp=${encodeURIComponent(fingerprint)}`);
  expect(res.statusCode).toBe(200);
  return (await res.body.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
}

const shownText = (m: SlackApiMessage) => JSON.stringify([m.text, m.blocks, m.attachments]);
const RETRYING = /retrying since \d{4}-\d\d-\d\d \d\d:\d\d UTC, step restart/;

describe('a failed run retried, in the Slack app and the console', () => {
  it('says "retrying since …, step …" in its living message and thread once, then resolves there', async () => {
    const run = failedRun('production');
    const appId = run.appId;
    const fingerprint = `failed_runs/run/${run.id}`;
    await daemon(appId);
    await cycle();
    const living = slack.inChannel().filter((m) => !m.thread_ts);
    expect(living).toHaveLength(1);
    const ts = living[0]!.ts;
    const message = () => slack.messages().find((m) => m.ts === ts)!;
    expect(shownText(message())).not.toMatch(RETRYING);
    const repliesBefore = slack.replies(ts).length;
    expect(await alertPageText(fingerprint)).not.toContain('Under way');

    clock.advance(MINUTE);
    await retryByHand(run.id);
    await cycle();
    // The same message says it, and its thread; nothing new in the channel.
    expect(shownText(message())).toMatch(RETRYING);
    expect(slack.replies(ts)).toHaveLength(repliesBefore + 1);
    expect(shownText(slack.replies(ts).at(-1)!)).toMatch(RETRYING);
    expect(slack.inChannel().filter((m) => !m.thread_ts)).toHaveLength(1);
    const page = await alertPageText(fingerprint);
    expect(page).toMatch(new RegExp(`Under way: ${RETRYING.source}`));
    expect(page).toContain('its outcome will be told');

    // Seen again while it runs: not said twice.
    clock.advance(MINUTE);
    await cycle();
    expect(slack.replies(ts)).toHaveLength(repliesBefore + 1);

    // Its own success resolves it, in the same message.
    clock.advance(5 * MINUTE);
    await cycle();
    expect(sim.control.state.runs.get(run.id)?.state).toBe('done');
    expect(shownText(slack.replies(ts).at(-1)!)).toContain(`run #${run.id} succeeded after a retry`);
    // Saying what failed, not the retry that is over (the note "Latest: …" stays, as every note does).
    expect(message().text).toMatch(/was: .* failed at step restart: x$/);
    expect(shownText(slack.replies(ts).at(-1)!)).not.toMatch(RETRYING);
    expect(message().attachments?.[0]?.color).toBe('#12b76a');
    expect(slack.inChannel().filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(await alertPageText(fingerprint)).not.toContain('Under way');
  });

  it('a silenced alert, shown in no message, is retried without a word in Slack', async () => {
    const run = failedRun('production');
    const appId = run.appId;
    await daemon(appId);
    createSilence(wd!.store, {
      matchers: [{ name: 'check', op: '=', value: 'failed_runs' }],
      durationMs: 60 * MINUTE,
      createdBy: 'test',
      reason: 'known',
      now: clock.now(),
    });
    await cycle();
    expect(slack.messages()).toEqual([]);
    clock.advance(MINUTE);
    await retryByHand(run.id);
    await cycle();
    expect(slack.messages()).toEqual([]);
  });
});

describe('a failed run the service retries by itself, within the grace', () => {
  it('the console says why it is held: the service retrying it, then the run running again', async () => {
    const run = failedRun('staging', true);
    const appId = run.appId;
    const fingerprint = `failed_runs/run/${run.id}`;
    await daemon(appId);
    await cycle();
    const held = await alertPageText(fingerprint);
    expect(held).toMatch(
      new RegExp(
        `held until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC: the service retries run #${run.id} by itself \\(checks\\.failed_runs\\.retrying_grace: 30m\\); told then unless it succeeds`,
      ),
    );
    expect(held).not.toContain('alerts.for');

    // The service retries it: the same run, running again. Held while it runs, and saying so.
    clock.advance(10 * MINUTE + 5_000);
    await cycle();
    expect(sim.control.state.runs.get(run.id)?.state).toBe('running');
    const running = await alertPageText(fingerprint);
    expect(running).toMatch(
      new RegExp(`held: run #${run.id} is running again \\(a retry since [^)]+\\): told only if the retry fails`),
    );
    expect(running).not.toContain('fires at its job');
    expect(slack.messages()).toEqual([]);
  });
});
