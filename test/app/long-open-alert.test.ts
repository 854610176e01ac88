/** An alert open for longer than the retention: what it still needs of its history survives the daily prune. */
import { afterEach, expect, it } from 'vitest';
import { createSilence } from '../../src/alerts/silences.js';
import { Watchdog } from '../../src/app/watchdog.js';
import { pruneState } from '../../src/state/retention.js';
import { captureLogger, engineConfig, manualSim, MINUTE, tempDir } from './fixtures.js';

const DAY = 24 * 60 * MINUTE;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => cleanup?.());

it('escalates an alert silenced for longer than the retention once its silence ends', async () => {
  const { sim, clock } = await manualSim();
  const tmp = tempDir();
  const capture = captureLogger('info');
  const notify = [
    'notify:',
    '  channels: [{ name: console, type: log }, { name: pager, type: log }]',
    '  routes: [{ channels: [console], escalate_after: 2h, escalate_to: [pager] }]',
  ].join('\n');
  const only =
    'jobs: { maintenance: "off", servers: "off", installers: "off", runs: "off", attention: "off", backups: "off" }';
  const config = engineConfig(sim, tmp.dir, `${only}\nalerts: { repeat_interval: "off" }`, sim.adminToken, notify);
  const wd = Watchdog.open({ config, clock, logger: capture.logger });
  cleanup = async () => {
    await wd.stop(1_000);
    await sim.close();
    tmp.cleanup();
  };
  const [url, ...others] = [...sim.control.state.urls.values()];
  for (const other of others) sim.control.checks.certificates.expire(other.id, { inDays: 5_000 });
  sim.control.checks.certificates.expire(url!.id, { inDays: 2 });
  await wd.runOnce(['urls']);
  await wd.deliverDue();
  const matchers = [{ name: 'check', op: '=' as const, value: 'certificates' }];
  createSilence(wd.store, { matchers, durationMs: 60 * DAY, reason: 'renewal', createdBy: 'ops', now: clock.now() });
  // A day at a time, pruned daily with a 30-day retention, as the daemon's retention job does.
  for (let day = 0; day < 61; day++) {
    clock.advance(DAY);
    await wd.runOnce(['urls']);
    await wd.deliverDue();
    pruneState(wd.store, { now: clock.now(), retentionMs: 30 * DAY });
  }
  const paged = capture.lines().filter((l) => l.channel === 'pager' && l.fingerprint === `certificates/url/${url!.id}`);
  expect(paged.map((l) => l.event)).toEqual(['escalated']);
}, 60_000);
