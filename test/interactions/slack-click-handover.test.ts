/**
 * A Slack button clicked while the replica that takes it no longer holds the leader lease: the
 * daemon (`run`, in this process) leads on a PostgreSQL state and has posted a failed run's living
 * message to the fake Slack Web API; then the lease row is made another holder's, as when another
 * replica took over, before this one's next renewal (a 5 minute lease renews every 75 s) has seen
 * it. The click's write is refused by the fence (`FencedError`): the person who clicked is told
 * that nothing changed and to try again in a few seconds, not "something went wrong"; nothing is
 * acknowledged, the message is not changed, the log says it as a warning (no error). With the
 * lease this replica's again, the same click acknowledges.
 */
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { Watchdog } from '../../src/app/watchdog.js';
import { parseConfig } from '../../src/config/load-config.js';
import { captureLogger, manualSim } from '../app/fixtures.js';
import { buttonOf, startSlackApi } from '../helpers/slack-api.js';
import { testCluster } from '../helpers/state-backends.js';
import { appOf } from '../remediation/remediation-fixture.js';

const BOT_TOKEN = 'xoxb-handover-bot-token';
const APP_TOKEN = 'xapp-1-handover-app-token';
const ALICE = { id: 'U0ALICE', username: 'alice' };

// A daemon on PostgreSQL with Slack: a few seconds on a quiet machine, far more under load.
vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a Slack click on a replica that no longer leads', () => {
  it('is answered "nothing changed, try again in a few seconds", writes nothing, and acts once the lease is back', async () => {
    const cluster = testCluster();
    const database = cluster.createDatabase();
    cleanups.push(() => cluster.dropDatabase(database));
    const url = cluster.url(database);
    const { sim, clock } = await manualSim({ apps: 12, seed: 7 });
    cleanups.push(() => sim.close());
    const slack = await startSlackApi({ token: BOT_TOKEN, appToken: APP_TOKEN, now: () => clock.now() });
    cleanups.push(() => slack.close());
    const run = sim.control.addRun({
      appId: appOf(sim, 'staging'),
      action: 'update',
      state: 'error',
      failedStep: 'build_image',
      reason: 'pip install failed',
    });
    const fingerprint = `failed_runs/run/${run.id}`;

    const config = parseConfig(
      [
        'api: { base_url: "${SIM_URL}", token: "${DMS_API_TOKEN}", requests_per_second: 1000, max_retries: 0, timeout: 5s }',
        'state: { url: "${DATABASE_URL}", leader: { lease: 5m } }',
        'jobs: { runs: "0 0 1 1 *", attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
        'notify:',
        '  channels:',
        '    - name: ops-app',
        '      type: slack_app',
        '      bot_token: "${SLACK_BOT_TOKEN}"',
        '      channel: C0ALERTS',
        `      api_url: "${slack.url}"`,
        '      interactions: { mode: socket, app_token: "${SLACK_APP_TOKEN}" }',
        '  routes: [{ channels: [ops-app] }]',
        'server: { listen: "off" }',
      ].join('\n'),
      {
        SIM_URL: sim.baseUrl,
        DMS_API_TOKEN: sim.adminToken,
        DATABASE_URL: url,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_APP_TOKEN: APP_TOKEN,
      },
      'handover.yaml',
    );
    const log = captureLogger('debug');
    const wd = Watchdog.open({ config, clock, logger: log.logger, lease: 'run' });
    cleanups.push(() => wd.stop(1_000).then(() => undefined));
    await wd.start();
    await vi.waitFor(() => expect(log.text()).toContain('became leader (epoch 1)'), { timeout: 30_000 });
    await slack.connected();
    await wd.runOnce(['runs']);
    await wd.deliverDue();
    const message = slack.inChannel().find((m) => !m.thread_ts && buttonOf(m, 'Acknowledge'));
    expect(message, 'the living message').toBeDefined();
    const acknowledge = buttonOf(message!, 'Acknowledge')!.value!;

    // Another holder's lease now, as after a takeover this replica's renewal has not yet seen.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    cleanups.push(() => db.end());
    const { rows } = await db.query<{ holder: string }>('SELECT holder FROM leader_lease WHERE id = 1');
    const ours = rows[0]!.holder;
    await db.query("UPDATE leader_lease SET holder = 'another-replica@test' WHERE id = 1");

    const clickAcknowledge = async () =>
      (await (await slack.clickOverSocket({ user: ALICE, message: message!, value: acknowledge })).answer).text;
    expect(await clickAcknowledge()).toBe(
      "Nothing changed: this replica of deploy-watchdog no longer leads (the database refused a write: the lease of epoch 1 is no longer this replica's). Try again in a few seconds.",
    );
    expect(alertStoreOf(wd.store).get(fingerprint)).toMatchObject({ acknowledgement: null });
    const shown = JSON.stringify(slack.messages().find((m) => m.ts === message!.ts));
    expect(shown).not.toContain('Acknowledged by');
    const said = log.lines().filter((l) => String(l.msg).includes('Slack button click'));
    expect(said.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^Slack button click failed: Nothing changed: this replica of deploy-watchdog no longer leads/,
      ),
      'Slack button click not audited: this replica no longer leads',
    ]);
    expect(said.map((l) => l.level)).toEqual([40, 40]); // warn
    expect(log.lines().filter((l) => (l.level as number) >= 50)).toEqual([]); // no error

    // The lease this replica's again (before its renewal looked): the same click acts.
    await db.query('UPDATE leader_lease SET holder = $1 WHERE id = 1', [ours]);
    expect(await clickAcknowledge()).toMatch(/^Acknowledged by alice \(U0ALICE\)/);
    expect(alertStoreOf(wd.store).get(fingerprint)?.acknowledgement).toMatchObject({
      by: 'alice (U0ALICE)',
      via: 'slack',
    });
  });
});
