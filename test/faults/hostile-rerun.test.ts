/**
 * The whole list of issue 25's hostile answers once more, in turn, against one running daemon on
 * each state engine: long text in a run's step and an attention item, an item of 126,000 fields, a
 * new error code every answer, the token spelled in `\u` escapes as a key, endless lists and
 * bodies, a body at the size cap. After each, the daemon is up and `/healthz` answers; at the end
 * nothing it logged or stored holds the token or the echoed webhook URL, the error codes made a
 * bounded set of metric series, and an ordinary failed run is still alerted and told.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { Watchdog } from '../../src/app/watchdog.js';
import { parseConfig } from '../../src/config/load-config.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { FaultSpec, FaultTarget } from '../../packages/simulator/src/fault-injector.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { captureLogger, manualSim, openWatchdog, tempDir } from '../app/fixtures.js';
import { freePort } from '../console/console-fixture.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

const TOKEN = 'hostile-rerun-token-7d1e4c2a90';
const ECHOED_URL = 'https://hooks.example.com/services/T0HOSTILE/B0HOSTILE/rerunsecret';

/** A field of `mb` MB built by the simulator, markup and a mention first. */
function longText(field: string, mb: number): FaultSpec {
  const head = '<!channel> <script>alert(1)</script> ';
  return { recordField: { field, value: `${head}${'r'.repeat(1024 - head.length)}`, repeat: Math.round(mb * 1024) } };
}

/** Every hostile answer, in the order the daemon meets them. */
const HOSTILE: readonly [string, FaultTarget, FaultSpec][] = [
  ['2 MB step reason in runs.get', 'runs.get', longText('steps.0.reason', 2)],
  ['2 MB attention reason', 'attention.list', longText('sections.0.items.0.reason', 2)],
  [
    'an attention item of 126,000 fields',
    'attention.list',
    { recordField: { field: 'sections.0.items.0', value: { id: 424242, name: 'wide' }, fields: 126_000 } },
  ],
  ['a new error code every answer', '*', { inventedErrorCodes: true }],
  [
    'the token \\u-escaped as a key, a webhook URL beside it',
    '*',
    { echoToken: true, echoEscaped: true, echoText: ECHOED_URL },
  ],
  ['an endless list', '*', { endlessList: true }],
  ['an endless body', 'runs.list', { endless: true }],
  ['a body just under max_answer_size', 'apps.get', { hugeMb: 7.9, times: 3 }],
];

describe.each(STATE_BACKENDS)('every hostile answer again, on $name', (backend) => {
  let sim: RunningSimulator;
  let clock: ManualClock;
  let state: TestState;
  let wd: Watchdog;
  let base = '';
  const log = captureLogger('info');
  const dir = tempDir();

  beforeAll(async () => {
    ({ sim, clock } = await manualSim({ apps: 20, seed: 5, adminToken: TOKEN }));
    state = backend.fresh(dir.dir);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = parseConfig(
      [
        'api:',
        '  base_url: ${SIM_URL}',
        '  token: ${DMS_API_TOKEN}',
        '  requests_per_second: 1000',
        '  max_retries: 0',
        '  timeout: 5s',
        '  page_size: 50',
        // An endless list is cut here, not after 200,000 items: the same bound, sooner.
        '  max_list_items: 1000',
        state.yaml,
        'checks: { sources: { failure_threshold: 1 } }',
        'notify:',
        '  channels: [{ name: console, type: log }]',
        '  routes: [{ channels: [console] }]',
        `server: { listen: "127.0.0.1:${port}" }`,
      ].join('\n'),
      { SIM_URL: sim.baseUrl, DMS_API_TOKEN: TOKEN },
      'rerun.yaml',
      { baseDir: dir.dir },
    );
    wd = openWatchdog(config, clock, { logger: log.logger });
    await wd.start();
  }, 60_000);

  afterAll(async () => {
    await wd?.stop(2_000);
    await sim?.close();
    state?.cleanup();
    dir.cleanup();
  });

  /** `/healthz` over HTTP, on a fresh connection each time. */
  async function healthz(): Promise<number> {
    const res = await request(`${base}/healthz`, { reset: true });
    await res.body.dump();
    return res.statusCode;
  }

  it(
    'stays up and answers /healthz through each, leaks nothing, and still tells an ordinary failure after',
    { timeout: 120_000 },
    async () => {
      for (const [what, target, fault] of HOSTILE) {
        sim.control.clearFaults();
        sim.control.setFault(target, fault);
        await wd.runOnce();
        await wd.deliverDue();
        expect(await healthz(), what).toBe(200);
        clock.advance(60_000);
      }
      sim.control.clearFaults();
      expect(sim.control.stats().streams).toBe(0);

      // The API error codes became a bounded set of series, "other" for the invented ones.
      const metrics = await (await request(`${base}/metrics`, { reset: true })).body.text();
      const codes = new Set(
        [...metrics.matchAll(/deploy_watchdog_api_errors_total\{[^}]*code="([^"]+)"/g)].map((m) => m[1]),
      );
      expect([...codes].some((c) => c!.startsWith('invented'))).toBe(false);
      expect(codes.size).toBeLessThan(30);

      // An ordinary failure: a failed update is alerted and told, as before any of this.
      const app = [...sim.control.state.apps.values()].find((a) => a.state === 'running' && !a.upgrade)!;
      const run = sim.control.addRun({
        appId: app.id,
        action: 'update',
        state: 'error',
        failedStep: 'restart',
        reason: 'rerun: an ordinary failure',
      });
      await wd.runOnce();
      await wd.deliverDue();
      expect(await healthz()).toBe(200);
      const told = log.lines().filter((l) => l.channel === 'console' && String(l.msg ?? '').includes(app.name));
      expect(told.length, `no message names ${app.name}`).toBeGreaterThan(0);
      const alerts = wd.store.db.prepare(`SELECT fingerprint FROM alerts WHERE check_name = 'failed_runs'`).all();
      expect(JSON.stringify(alerts)).toContain(String(run.id));

      // Nothing logged or stored holds the token or the URL that came with it.
      expect(log.text()).not.toContain(TOKEN);
      expect(log.text()).not.toContain('rerunsecret');
      for (const table of [
        'alerts',
        'events',
        'outbox',
        'outbox_bodies',
        'source_health',
        'notification_log',
        'meta',
      ]) {
        const rows = JSON.stringify(wd.store.db.prepare(`SELECT * FROM ${table}`).all());
        expect(rows.includes(TOKEN), table).toBe(false);
        expect(rows.includes('rerunsecret'), table).toBe(false);
      }
    },
  );
});
