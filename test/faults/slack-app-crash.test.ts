/**
 * `deploy-watchdog run` SIGKILLed between posting a Slack app channel's living message and keeping
 * its `ts`: Slack (the fake Web API) took the post and its answer never came back, or the post never
 * arrived at all. Restarted on the same state file, the daemon finds its intent, looks for the
 * message by the token its metadata carries, and adopts it (or, never arrived, posts it): one
 * living message per group, updated and threaded after. When the history cannot be read (the app
 * lacks channels:history), it posts again and says that one duplicate may exist: at most one extra
 * message per crash, adopted or said.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { startSlackApi, type SlackApi } from '../helpers/slack-api.js';
import { RunChildren, tempDir, writeRunConfig } from './fault-fixture.js';

const TOKEN = 'xoxb-crash-test-SECRET-bot-token';

let sim: RunningSimulator;
let slack: SlackApi;
let tmp: ReturnType<typeof tempDir>;
let runs: RunChildren;

beforeEach(async () => {
  sim = await startSimulator({ apps: 6, seed: 5 });
  slack = await startSlackApi({ token: TOKEN });
  tmp = tempDir('dw-slack-crash-');
  runs = new RunChildren({ DMS_API_TOKEN: sim.adminToken, SLACK_BOT_TOKEN: TOKEN });
  // A new failure in production: at least one alert group to announce.
  const app = [...sim.control.state.apps.values()].find((a) => a.deployedAt !== null && a.envType === 'production');
  sim.control.addRun({ appId: app!.id, action: 'restart', state: 'error' });
});
afterEach(async () => {
  runs.killAll();
  await slack.close();
  await sim.close();
  tmp.cleanup();
});

function writeConfig(): string {
  return writeRunConfig(tmp.dir, sim, [
    'jobs: { runs: "* * * * * *", urls: "off", backups: "off", attention: "off", maintenance: "off", jitter: 0s }',
    'notify:',
    '  channels:',
    `    - { name: ops-app, type: slack_app, bot_token: "\${SLACK_BOT_TOKEN}", channel: C0ALERTS, api_url: "${slack.url}", timeout: 60000 }`,
    '  routes: [{ channels: [ops-app] }]',
    '  delivery: { interval: 200ms, initial_backoff: 1s, max_backoff: 2s, timeout: 2s }',
  ]);
}

interface LinkRow {
  status: string;
  token: string;
  ts: string | null;
}

/** The living message rows and the outbox rows still waiting, read from the daemon's state file. */
function readState(): { links: LinkRow[]; waiting: number } | null {
  const file = path.join(tmp.dir, 'state.db');
  if (!fs.existsSync(file)) return null;
  const db = new Database(file, { readonly: true, timeout: 2_000 });
  try {
    return {
      links: db.prepare('SELECT status, token, ts FROM slack_app_messages ORDER BY id').all() as LinkRow[],
      waiting: (
        db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE status IN ('pending', 'held')`).get() as { n: number }
      ).n,
    };
  } catch {
    return null; // the tables are not made yet
  } finally {
    db.close();
  }
}

describe.each([
  {
    when: 'Slack took the post and the answer never came back',
    keep: true,
    history: undefined,
    extra: 0,
    says: 'adopted the living message posted before a restart',
  },
  {
    when: 'the post never arrived',
    keep: false,
    history: undefined,
    extra: 0,
    says: 'the living message whose post was cut short never reached Slack; posting it',
  },
  {
    when: 'Slack took the post, and the app may not read the history (no channels:history)',
    keep: true,
    history: 'missing_scope',
    extra: 1,
    says: 'posting it again, so one duplicate may exist',
  },
])(
  'SIGKILL of `run` between the post of a living message and keeping its ts: $when',
  ({ keep, history, extra, says }) => {
    it(`restarted, it has one living message per group${extra ? ', and one extra, said' : ', adopted or posted once'}`, async () => {
      const config = writeConfig();
      slack.holdNext('chat.postMessage', { keep });
      const first = runs.start(config);
      await slack.held();
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');

      const killed = readState();
      expect(killed?.links[0], runs.output.slice(-2000)).toMatchObject({ status: 'posting', ts: null });
      const intent = killed!.links[0]!;
      const heldMessage = slack.inChannel().find((m) => m.metadata?.event_payload?.token === intent.token);
      expect(heldMessage !== undefined).toBe(keep);

      if (history) slack.failNext('conversations.history', history, { extra: { needed: 'channels:history' } });
      const second = runs.start(config);
      await vi.waitFor(
        () => {
          const s = readState();
          expect(s?.waiting, runs.output.slice(-2000)).toBe(0);
          expect(s?.links.some((l) => l.status === 'posting')).toBe(false);
        },
        { timeout: 40_000, interval: 200 },
      );
      second.child.kill('SIGTERM');
      expect((await second.exited).code, runs.output.slice(-3000)).toBe(0);

      const { links } = readState()!;
      const adopted = links.find((l) => l.token === intent.token)!;
      expect(adopted.status).not.toBe('posting');
      if (keep && !history) expect(adopted.ts).toBe(heldMessage!.ts);
      // One message per living message in the channel, plus the one a crash may leave, said in the log.
      const living = slack.inChannel().filter((m) => m.metadata !== undefined);
      expect(living).toHaveLength(links.length + extra);
      // A message adopted was this news's first post: its thread reply is not said in the channel again.
      expect(slack.inChannel().filter((m) => m.thread_ts)).toEqual([]);
      for (const link of links) expect(slack.replies(link.ts!).length, `thread of ${link.ts}`).toBeGreaterThan(0);
      expect(slack.callsOf('conversations.history')).toMatchObject([
        { args: { channel: 'C0ALERTS', include_all_metadata: 'true' } },
      ]);
      expect(runs.output).toContain(says);
      expect(runs.output).not.toContain(TOKEN);
      // Two daemons started and one killed, and a wait of up to 40 s: a loaded machine needs the room.
    }, 120_000);
  },
);
