/**
 * Time to alert, end to end: a run fails on the simulator, the daemon reads it, and its firing
 * notification is delivered on two channels; the histogram observes it once, from the run's
 * `updated_at` to the first delivery, in the right bucket, and the console's sources page shows the
 * check's p50 and p95.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/lib/format-duration.js';
import { parseTime } from '../../src/lib/parse-time.js';
import { startConsoleDaemon, type ConsoleDaemon } from './console-fixture.js';

let daemon: ConsoleDaemon;
let updatedAt = 0;
let fingerprint = '';

beforeAll(async () => {
  daemon = await startConsoleDaemon({
    notify: [
      'notify:',
      '  channels: [{ name: first, type: log }, { name: second, type: log }]',
      '  routes: [{ channels: [first, second] }]',
    ].join('\n'),
  });
  const { sim, clock, wd } = daemon;
  const busy = new Set([...sim.control.state.activeRuns].map((id) => sim.control.state.runs.get(id)?.appId));
  const app = [...sim.control.state.apps.values()].find((a) => a.state === 'running' && !a.upgrade && !busy.has(a.id))!;
  const run = sim.control.addRun({ appId: app.id, action: 'update', state: 'error', startedAgoMs: 30_000 });
  updatedAt = parseTime(run.updated_at)!;
  fingerprint = `failed_runs/run/${run.id}`;
  // The watchdog reads it 73 s after its last update, and tells it at once.
  clock.advance(73_000 - (clock.now() - updatedAt));
  await wd.runOnce(['runs']);
  await wd.deliverDue();
}, 60_000);
afterAll(() => daemon?.close());

/** The histogram's cumulative bucket counts for a check, by upper bound. */
async function buckets(check: string): Promise<{ le: Map<number, number>; count: number; sum: number }> {
  const metric = await daemon.wd.metrics.timeToAlert.get();
  const ofCheck = metric.values.filter((v) => v.labels.check === check);
  const le = new Map<number, number>();
  for (const v of ofCheck.filter((v) => v.metricName?.endsWith('_bucket'))) {
    const bound = (v.labels as { le?: number | string }).le;
    le.set(bound === '+Inf' ? Infinity : Number(bound), v.value);
  }
  const value = (suffix: string) => ofCheck.find((v) => v.metricName?.endsWith(suffix))?.value ?? 0;
  return { le, count: value('_count'), sum: value('_sum') };
}

describe('time to alert', () => {
  it('observes a delivered firing once, from the record’s own time to its first delivery, in its bucket', async () => {
    const row = daemon.wd.store.db
      .prepare(
        `SELECT t.record_at AS recordAt, t.delivered_at AS deliveredAt, t.channel FROM time_to_alert t
         JOIN events e ON e.id = t.event_id WHERE e.fingerprint = ?`,
      )
      .get(fingerprint) as { recordAt: number; deliveredAt: number; channel: string };
    expect(row.recordAt).toBe(updatedAt);
    const seconds = (row.deliveredAt - updatedAt) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(73);
    expect(seconds).toBeLessThan(90);
    // Two channels delivered it: one observation, between the 60 s and 90 s bounds.
    const delivered = daemon.wd.store.db
      .prepare(
        `SELECT COUNT(*) AS n FROM outbox o JOIN events e ON e.id = o.event_id WHERE e.fingerprint = ? AND o.status = 'sent'`,
      )
      .get(fingerprint) as { n: number };
    expect(delivered.n).toBe(2);
    const failed = await buckets('failed_runs');
    const mine = (le: number) => (failed.le.get(le) ?? 0) - (failed.le.get(60) ?? 0);
    expect(mine(60)).toBe(0);
    expect(mine(90)).toBe(1);
    expect(mine(Infinity)).toBe(1);
    // Nothing delivered again adds to it.
    await daemon.wd.runOnce(['runs']);
    await daemon.wd.deliverDue();
    expect((await buckets('failed_runs')).count).toBe(failed.count);
  });

  it('is shown per check on the sources page: how many were told, p50 and p95 over the last day', async () => {
    const page = await fetch(`${daemon.base}/sources`).then((r) => r.text());
    expect(page).toContain('<h2>Time to alert</h2>');
    const row = /<tr data-check="failed_runs">[^]*?<\/tr>/.exec(page)![0];
    const cells = [...row.matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]);
    const rows = daemon.wd.store.db
      .prepare(`SELECT delivered_at - record_at AS ms FROM time_to_alert WHERE check_name = 'failed_runs' ORDER BY ms`)
      .all() as { ms: number }[];
    const at = (p: number) => rows[Math.max(0, Math.ceil(p * rows.length) - 1)]!.ms;
    const shown = (ms: number) => formatDuration(Math.round(ms / 1000) * 1000, 'brief');
    expect(cells).toEqual(['failed_runs', String(rows.length), shown(at(0.5)), shown(at(0.95))]);
  });
});
