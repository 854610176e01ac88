import * as promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Registry, collectProcessMetrics } from '../../src/lib/prom-client-core.js';
import { modulesLoadedBy } from '../helpers/loaded-modules.js';

/** The metric names a registry renders, sorted. */
async function names(registry: { getMetricsAsJSON(): Promise<{ name: string }[]> }): Promise<string[]> {
  return (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
}

describe('prom-client-core: the metric classes and process metrics, without prom-client’s index', () => {
  it('registers every metric prom-client’s collectDefaultMetrics does, by the same names', async () => {
    const ours = new Registry();
    collectProcessMetrics(ours);
    const theirs = new promClient.Registry();
    promClient.collectDefaultMetrics({ register: theirs });
    expect(await names(ours)).toEqual(await names(theirs));
    expect(await names(ours)).toEqual(
      expect.arrayContaining([
        'process_cpu_seconds_total',
        'nodejs_eventloop_lag_seconds',
        'process_resident_memory_bytes',
      ]),
    );
  });

  it('counts the process’s CPU time: user and system, and their sum, each rising as the process works', async () => {
    const registry = new Registry();
    collectProcessMetrics(registry);
    const read = async () => {
      const text = await registry.metrics();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
      return {
        user: value('process_cpu_user_seconds_total'),
        system: value('process_cpu_system_seconds_total'),
        total: value('process_cpu_seconds_total'),
      };
    };
    const before = await read();
    let spin = 0;
    for (let i = 0; i < 2e7; i++) spin += i % 7;
    expect(spin).toBeGreaterThan(0);
    const after = await read();
    expect(after.user).toBeGreaterThan(before.user);
    expect(after.system).toBeGreaterThanOrEqual(before.system);
    expect(after.total).toBeCloseTo(after.user + after.system, 5);
    expect(after.total - before.total).toBeCloseTo(after.user - before.user + (after.system - before.system), 5);
  });

  it('loads neither prom-client’s index nor OpenTelemetry', () => {
    const loaded = modulesLoadedBy(new URL('../../src/lib/metrics.ts', import.meta.url));
    expect(loaded.filter((f) => f.includes('prom-client')).length).toBeGreaterThan(0);
    expect(loaded.filter((f) => /prom-client[\\/]index\.js$/.test(f) || f.includes('@opentelemetry'))).toEqual([]);
  });
});
