/**
 * The parts of prom-client the daemon uses, loaded without the rest of the package.
 *
 * prom-client's index loads its default metrics, whose process CPU counters load
 * `@opentelemetry/api` for exemplars (a trace id on a sample) we never enable, and its Summary,
 * Pushgateway and cluster aggregation we never use: 10.3 MB of resident memory for the package
 * against 42 MB for a bare node (6.8 MB of it OpenTelemetry; five runs each after two forced
 * collections), memory a 10,000-app cycle's peak carries (issue 23's 128 MB).
 *
 * So the metric classes come from their own modules, the default metrics are registered one
 * module at a time ({@link collectProcessMetrics}), and the three process CPU counters are
 * written here: the same names, help and values as prom-client's, without exemplars. The paths
 * are prom-client's own files, not its public API: `package.json` pins a major version and
 * `test/server/metrics-exposition.test.ts` renders every metric through `promtool`, so an upgrade
 * that moves them fails the tests, not a running daemon. Types come from the package as usual.
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const load = createRequire(import.meta.url);

/** prom-client's `Counter`. */
export const Counter = load('prom-client/lib/counter.js') as typeof PromClient.Counter;
/** prom-client's `Gauge`. */
export const Gauge = load('prom-client/lib/gauge.js') as typeof PromClient.Gauge;
/** prom-client's `Histogram`. */
export const Histogram = load('prom-client/lib/histogram.js') as typeof PromClient.Histogram;
/** prom-client's `Registry`. */
export const Registry = load('prom-client/lib/registry.js') as typeof PromClient.Registry;
/** A prom-client `Registry` instance. */
export type Registry = PromClient.Registry;

/** One of prom-client's default metrics: registers its collectors in `registry`. */
type DefaultMetric = (registry: PromClient.Registry, config: Record<string, unknown>) => void;

/**
 * prom-client's default metrics other than the process CPU counters, in the order its
 * `collectDefaultMetrics` registers them (`processResources` only where node can tell them).
 */
const DEFAULT_METRIC_MODULES = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  ...(typeof (process as { getActiveResourcesInfo?: unknown }).getActiveResourcesInfo === 'function'
    ? ['processResources']
    : []),
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
] as const;

/**
 * Registers in `registry` what prom-client's `collectDefaultMetrics` does: the process's CPU,
 * memory, file descriptors, start time, handles and resources, and Node's heap, event-loop lag
 * (`nodejs_eventloop_lag_seconds`), garbage collections and version.
 */
export function collectProcessMetrics(registry: PromClient.Registry): void {
  const config = { register: registry, eventLoopMonitoringPrecision: 10 };
  registerProcessCpu(registry);
  for (const name of DEFAULT_METRIC_MODULES)
    (load(`prom-client/lib/metrics/${name}.js`) as DefaultMetric)(registry, config);
}

/** `process_cpu_{user,system}_seconds_total` and their sum, as prom-client's default metrics name them. */
function registerProcessCpu(registry: PromClient.Registry): void {
  let last = process.cpuUsage();
  const counter = (name: string, help: string, collect?: () => void) =>
    new Counter({ name, help, registers: [registry], ...(collect ? { collect } : {}) });
  // One collect for all three (prom-client's way): the user counter is registered first, so it is
  // asked first, and the others are current by the time they are rendered.
  counter(
    'process_cpu_user_seconds_total',
    'Total user CPU time spent in seconds.',
    function collect(this: PromClient.Counter) {
      const now = process.cpuUsage();
      const user = (now.user - last.user) / 1e6;
      const sys = (now.system - last.system) / 1e6;
      last = now;
      this.inc(user);
      systemCounter.inc(sys);
      totalCounter.inc(user + sys);
    },
  );
  const systemCounter = counter('process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.');
  const totalCounter = counter('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.');
}
