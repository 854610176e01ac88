/**
 * `/metrics` as Prometheus reads it: the exposition served by the health listener, with every
 * metric recorded (a label value from the service with quotes, a backslash and a line break
 * included), piped into Prometheus' own `promtool check metrics`, which parses it with Prometheus'
 * exposition-format parser and lints the names; any complaint fails the test.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { packageVersion } from '../../src/lib/package-version.js';
import { silentLogger } from '../../src/lib/logger.js';
import { startHealthServer, type HealthServer } from '../../src/server/health-server.js';
import { Metrics } from '../../src/lib/metrics.js';

/** Prometheus' own tool; `.ci/run` installs it (Debian's prometheus package). */
const PROMTOOL = 'promtool';

let server: HealthServer;
let exposition: string;
let contentType: string | string[] | undefined;

beforeAll(async () => {
  const metrics = new Metrics();
  metrics.cycles.inc({ source: 'runs', outcome: 'ok' });
  metrics.cycleDuration.observe({ source: 'runs' }, 0.4);
  metrics.lastSuccess.set({ source: 'runs' }, 1_790_000_000);
  metrics.apiRequests.inc({ function: 'runs.list', status: '200' });
  metrics.apiLatency.observe({ function: 'runs.list' }, 0.05);
  // An error code is the service's text: whatever it holds must stay one well-formed label value.
  metrics.apiErrors.inc({ function: 'urls.list', code: 'odd "code"\\ with\na break' });
  metrics.openAlerts.set({ check: 'failed_runs', severity: 'critical' }, 2);
  metrics.resolutionsHeld.set({ source: 'runs' }, 0);
  metrics.notifications.inc({ channel: 'ops-slack', outcome: 'sent' });
  metrics.outboxWaiting.set({ channel: 'ops-slack' }, 1);
  metrics.remediation.inc({ policy: 'retry-staging', action: 'runs.retry', outcome: 'acted' });
  server = await startHealthServer({
    listen: '127.0.0.1:0',
    metrics,
    logger: silentLogger,
    source: { alive: () => true, readiness: () => [] },
  });
  const res = await request(`http://127.0.0.1:${server.address.port}/metrics`);
  contentType = res.headers['content-type'];
  exposition = await res.body.text();
});

afterAll(async () => server?.close());

/** The metric family names the exposition declares (`# TYPE name kind`). */
function families(): string[] {
  return [...exposition.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!);
}

describe('/metrics', () => {
  it('is served in the Prometheus text format', () => {
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('passes `promtool check metrics` without a single complaint', () => {
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(checked.error, 'promtool must be installed (.ci/run installs it)').toBeUndefined();
    expect({ code: checked.status, output: `${checked.stdout}${checked.stderr}` }).toEqual({ code: 0, output: '' });
  });

  it('still fails `promtool check metrics` on a name Prometheus refuses (the check can fail)', () => {
    const bad = `${exposition}# HELP deploy_watchdog_x_total A gauge named like a counter.\n# TYPE deploy_watchdog_x_total gauge\ndeploy_watchdog_x_total 1\n`;
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: bad, encoding: 'utf8' });
    expect(checked.status).not.toBe(0);
    expect(`${checked.stdout}${checked.stderr}`).toContain('deploy_watchdog_x_total');
  });

  it('names Node and process metrics as prom-client and the usual dashboards do, without our prefix', () => {
    const names = families();
    for (const standard of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_gc_duration_seconds',
    ]) {
      expect(names).toContain(standard);
    }
    expect(names.filter((n) => /^deploy_watchdog_(process|nodejs)_/.test(n))).toEqual([]);
    expect(names.filter((n) => !/^(deploy_watchdog|process|nodejs)_/.test(n))).toEqual([]);
  });

  it('labels the job a metric is about `source`, never `job` (Prometheus would rename it exported_job)', () => {
    expect(exposition).toContain('deploy_watchdog_cycles_total{source="runs",outcome="ok"} 1');
    expect(exposition).not.toMatch(/[{,]job="/);
  });

  it('carries deploy_watchdog_build_info with the version of package.json, valued 1', () => {
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
    expect(exposition).toContain(`deploy_watchdog_build_info{version="${packageVersion()}"} 1\n`);
  });
});
