/**
 * The runs collector with its cross-cycle memory and the shared apps.list, against the simulator on
 * a manual clock, counting the requests the simulator received per cycle.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/lib/logger.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { collectBackups } from '../../src/collectors/collect-backups.js';
import { collectMaintenance } from '../../src/collectors/collect-maintenance.js';
import { collectRuns, DETAIL_READS_PER_CYCLE } from '../../src/collectors/collect-runs.js';
import { collectUrls } from '../../src/collectors/collect-urls.js';
import type { CollectorContext } from '../../src/collectors/collector-context.js';
import { RunsMemory } from '../../src/collectors/runs-memory.js';
import { LABELS_MAX_AGE_MS, SharedApps } from '../../src/collectors/shared-apps.js';
import { parseConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/lib/secret.js';
import { detectorOptionsFromConfig, relevanceFor, runDetectors } from '../../src/detectors/registry.js';
import { subjectKey } from '../../src/lib/alert-vocabulary.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
let sim: RunningSimulator;
let clock: ManualClock;
let client: ApiClient;

beforeAll(async () => {
  clock = new ManualClock();
  sim = await startSimulator({ apps: 40, seed: 11, clock });
  client = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(sim.adminToken),
    requestsPerSecond: 1000,
    maxRetries: 0,
    pageSize: 50,
  });
});
afterAll(async () => {
  await client.close();
  await sim.close();
});
beforeEach(() => sim.control.resetRequests());

const config = parseConfig(`api: { base_url: "http://127.0.0.1:1", token: t }\n`, {}, 'test.yaml');
const options = detectorOptionsFromConfig(config.checks);

/** A cycle's context at the simulator's time now, with the memory and shared list given. */
function ctx(memory?: RunsMemory, sharedApps?: SharedApps, openSubjects: CollectorContext['openSubjects'] = []) {
  const now = sim.control.now();
  return {
    client,
    namespaces: null,
    checks: config.checks,
    now,
    concurrency: 4,
    logger: silentLogger,
    relevance: relevanceFor(options, now, new Set(openSubjects.map((o) => subjectKey(o.subject)))),
    openSubjects,
    ...(memory && { runsMemory: memory }),
    ...(sharedApps && { sharedApps }),
  } satisfies CollectorContext;
}

/** The requests of the last cycle, by function, and reset. */
function counted(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of sim.control.requests()) out[r.fn] = (out[r.fn] ?? 0) + 1;
  sim.control.resetRequests();
  return out;
}

const reads = (id: number) => sim.control.requests().filter((r) => r.fn === 'runs.get' && r.path.endsWith(`/${id}`));

/** A fresh memory warmed by two cycles (the second reads the failures the first announced), its requests forgotten. */
async function warmMemory(): Promise<RunsMemory> {
  const memory = new RunsMemory();
  await collectRuns(ctx(memory));
  clock.advance(MINUTE);
  await collectRuns(ctx(memory));
  sim.control.resetRequests();
  return memory;
}

describe('collectRuns with a memory', () => {
  it('reads a steady estate with the lists alone: before and after, per cycle', async () => {
    const before = (await collectRuns(ctx()), counted());
    const memory = new RunsMemory();
    const shared = new SharedApps();
    const first = (await collectRuns(ctx(memory, shared)), counted());
    clock.advance(MINUTE);
    const second = (await collectRuns(ctx(memory, shared)), counted());
    clock.advance(MINUTE);
    const steady = (await collectRuns(ctx(memory, shared)), counted());
    // Without a memory: the whole window and a runs.get per failed or active run, every cycle.
    expect(before['runs.get']).toBeGreaterThan(3);
    // The first cycle with a memory: the same walk, the failures read, not the young runs still going.
    expect(first['runs.list']).toBeGreaterThanOrEqual(before['runs.list']!);
    expect(first['runs.get']).toBeLessThan(before['runs.get']!);
    expect(second['runs.get'] ?? 0).toBe(0);
    // Steady: one page of the walk, one per failed and active state, nothing by id, no apps.list.
    const states = config.checks.failed_runs.failed_states.length + config.checks.stuck_runs.active_states.length;
    expect(steady).toEqual({ 'runs.list': 1 + states });
  });

  it('finds what the whole read finds, cycle after cycle', async () => {
    const superseded = sim.control.addRun({ appId: 4, action: 'update', state: 'error', startedAgoMs: DAY / 2 });
    sim.control.addRun({ appId: 4, action: 'update', state: 'done', startedAgoMs: DAY / 4 });
    const laterFixed = sim.control.addRun({ appId: 2, action: 'update', state: 'error', startedAgoMs: DAY / 2 });
    const memory = await warmMemory();
    const failed = sim.control.addRun({ appId: 3, action: 'update', state: 'error', startedAgoMs: 2 * MINUTE });
    // Created and finished between two cycles (as the simulator's churn makes them): the walk sees it.
    sim.control.addRun({ appId: 2, action: 'update', state: 'done', startedAgoMs: 4 * MINUTE });
    clock.advance(MINUTE);
    const fingerprints = async (c: CollectorContext) =>
      runDetectors(await collectRuns(c), options, c.now)
        .findings.map((f) => f.fingerprint)
        .sort();
    for (let i = 0; i < 3; i++) {
      const economical = await fingerprints(ctx(memory, new SharedApps()));
      expect(economical).toEqual(await fingerprints(ctx()));
      expect(economical).toContain(`failed_runs/run/${failed.id}`);
      expect(economical).not.toContain(`failed_runs/run/${superseded.id}`);
      expect(economical).not.toContain(`failed_runs/run/${laterFixed.id}`);
      clock.advance(MINUTE);
    }
  });

  it('reads a new failure by id once, then never again until its updated_at moves', async () => {
    const memory = await warmMemory();
    const run = sim.control.addRun({ appId: 5, action: 'update', state: 'error', reason: 'pip failed' });
    clock.advance(MINUTE);
    const first = await collectRuns(ctx(memory));
    expect(reads(run.id)).toHaveLength(1);
    const finding = runDetectors(first, options, first.takenAt).findings.find((f) => f.subject?.id === run.id);
    expect(finding?.details.reason).toBe('pip failed');

    for (let i = 0; i < 3; i++) {
      clock.advance(MINUTE);
      sim.control.resetRequests();
      const again = await collectRuns(ctx(memory));
      expect(reads(run.id)).toHaveLength(0);
      expect(again.details.get(run.id)?.steps.some((s) => s.reason === 'pip failed')).toBe(true);
    }

    // Retried and failed again: its updated_at moved, so it is read again.
    clock.advance(MINUTE);
    sim.control.setRunState(run.id, { state: 'error', reason: 'disk full' });
    sim.control.resetRequests();
    const moved = await collectRuns(ctx(memory));
    expect(reads(run.id)).toHaveLength(1);
    expect(moved.details.get(run.id)?.steps.some((s) => s.reason === 'disk full')).toBe(true);
  });

  it('reads a run old enough to be stuck every cycle while its watcher waits, a young one never', async () => {
    const memory = await warmMemory();
    const waiting = { state: 'waiting' as const, progress: 'uploading the archive' };
    const old = sim.control.addRun({
      appId: 7,
      action: 'backup',
      state: 'running',
      watcher: waiting,
      startedAgoMs: 3 * 60 * MINUTE,
    });
    const young = sim.control.addRun({
      appId: 8,
      action: 'backup',
      state: 'running',
      watcher: waiting,
      startedAgoMs: 10 * MINUTE,
    });
    for (let i = 0; i < 3; i++) {
      clock.advance(MINUTE);
      sim.control.resetRequests();
      const snapshot = await collectRuns(ctx(memory));
      // The watcher's progress moves without the run's updated_at: only a read by id can say it.
      expect(reads(old.id)).toHaveLength(1);
      expect(snapshot.details.get(old.id)?.watcher?.state).toBe('waiting');
      // Still young: its steps and watcher can change nothing said (stuck_runs waits 2h).
      expect(reads(young.id)).toHaveLength(0);
    }
    // Settled, so the later tests' cycles do not read them (the simulator is shared).
    for (const run of [old, young]) sim.control.setRunState(run.id, { state: 'done', watcher: { state: 'completed' } });
  });

  it('uses a detail the context reader read (remember) without reading the run again', async () => {
    const memory = await warmMemory();
    const run = sim.control.addRun({ appId: 6, action: 'update', state: 'error', reason: 'lint' });
    clock.advance(MINUTE);
    memory.remember(await client.runs.get(run.id));
    sim.control.resetRequests();
    const snapshot = await collectRuns(ctx(memory));
    expect(reads(run.id)).toHaveLength(0);
    expect(snapshot.details.get(run.id)?.id).toBe(run.id);
  });

  it('reads at once the failure an open alert is about (a restart), and never a superseded one', async () => {
    const old = sim.control.addRun({ appId: 7, action: 'update', state: 'error', startedAgoMs: DAY / 2 });
    sim.control.addRun({ appId: 7, action: 'update', state: 'done', startedAgoMs: DAY / 3 });
    const open = sim.control.addRun({ appId: 8, action: 'update', state: 'error', startedAgoMs: DAY / 2 });
    const memory = new RunsMemory();
    for (let i = 0; i < 3; i++) {
      sim.control.resetRequests();
      await collectRuns(ctx(memory, undefined, [{ check: 'failed_runs', subject: { type: 'run', id: open.id } }]));
      expect(reads(old.id)).toHaveLength(0);
      expect(reads(open.id)).toHaveLength(i === 0 ? 1 : 0);
      clock.advance(MINUTE);
    }
  });

  it('reads a run that left the active states once, and its success supersedes the older failure', async () => {
    const failed = sim.control.addRun({ appId: 9, action: 'update', state: 'error', startedAgoMs: DAY / 2 });
    const retry = sim.control.addRun({ appId: 9, action: 'update', state: 'running', startedAgoMs: MINUTE });
    const memory = await warmMemory();
    clock.advance(MINUTE);
    const going = await collectRuns(ctx(memory));
    // A young run still going is not read: its steps can change nothing said.
    expect(reads(retry.id)).toHaveLength(0);
    // Run lineage: a failure nobody was told of, behind a newer run of its app and action still
    // going, is not announced (the newer run may be its retry); it is in view, though.
    expect(going.runs.map((r) => r.id)).toContain(failed.id);
    expect(runDetectors(going, options, going.takenAt).findings.map((f) => f.subject?.id)).not.toContain(failed.id);

    sim.control.setRunState(retry.id, { state: 'done' });
    clock.advance(MINUTE);
    sim.control.resetRequests();
    const settled = await collectRuns(ctx(memory));
    expect(reads(retry.id)).toHaveLength(1);
    expect(runDetectors(settled, options, settled.takenAt).findings.map((f) => f.subject?.id)).not.toContain(failed.id);
    clock.advance(MINUTE);
    sim.control.resetRequests();
    await collectRuns(ctx(memory));
    expect(reads(retry.id)).toHaveLength(0);
  });

  it('announces a storm from the lists, reading a bounded number by id a cycle, and the rest after', async () => {
    const memory = await warmMemory();
    const apps = [...sim.control.state.apps.values()].slice(0, 40);
    const storm = apps.map((app) => sim.control.addRun({ appId: app.id, action: 'restart', state: 'error' }));
    storm.push(...apps.map((app) => sim.control.addRun({ appId: app.id, action: 'backup', state: 'error' })));
    clock.advance(MINUTE);
    const first = await collectRuns(ctx(memory));
    expect(counted()['runs.get']).toBe(DETAIL_READS_PER_CYCLE);
    // Every one of them is a finding at once, a bounded number with their step.
    const found = runDetectors(first, options, first.takenAt).findings.filter((f) =>
      storm.some((r) => r.id === f.subject?.id),
    );
    expect(found).toHaveLength(storm.length);
    expect(found.filter((f) => f.details.step !== undefined)).toHaveLength(DETAIL_READS_PER_CYCLE);
    expect(memory.awaiting.size).toBe(storm.length - DETAIL_READS_PER_CYCLE);
    // The context reader reads some of the rest; the next cycle reads the others.
    const byReader = storm.filter((r) => !memory.details.has(r.id)).slice(0, 10);
    for (const run of byReader) memory.remember(await client.runs.get(run.id));
    sim.control.resetRequests();
    clock.advance(MINUTE);
    await collectRuns(ctx(memory));
    expect(counted()['runs.get']).toBe(storm.length - DETAIL_READS_PER_CYCLE - byReader.length);
    expect(storm.every((r) => memory.details.has(r.id))).toBe(true);
  });

  it("reads a storm's production failures by id first, so their alerts say the step", async () => {
    const memory = await warmMemory();
    const apps = [...sim.control.state.apps.values()];
    const production = apps.filter((a) => a.envType === 'production').slice(0, 5);
    const others = apps.filter((a) => a.envType !== 'production');
    // Production failed first: the newest, read first until now, were staging and development.
    const told = production.map((app) => sim.control.addRun({ appId: app.id, action: 'update', state: 'error' }));
    for (const action of ['restart', 'backup'] as const)
      for (const app of others) sim.control.addRun({ appId: app.id, action, state: 'error' });
    expect(others.length * 2).toBeGreaterThan(DETAIL_READS_PER_CYCLE);
    clock.advance(MINUTE);
    const cycle = await collectRuns(ctx(memory));
    const withStep = runDetectors(cycle, options, cycle.takenAt)
      .findings.filter((f) => f.details.step !== undefined)
      .map((f) => f.subject?.id);
    expect(production.length).toBeGreaterThan(0);
    expect(withStep).toEqual(expect.arrayContaining(told.map((r) => r.id)));
  });
});

describe('the shared apps.list', () => {
  it('is read once per cycle window by the runs, urls, backups and maintenance jobs', async () => {
    const shared = new SharedApps();
    const memory = new RunsMemory();
    sim.control.addRun({ appId: 10, action: 'update', state: 'error' });
    for (const collect of [collectRuns, collectUrls, collectBackups, collectMaintenance] as const) {
      await collect(ctx(memory, shared));
    }
    // One read of the list: its pages (40 apps: one), once.
    const oneRead = counted()['apps.list'];
    expect(oneRead).toBeLessThanOrEqual(Math.ceil(sim.control.state.apps.size / 50));

    // A minute on: labels are still good (runs, urls); the backups job reads this window's list.
    clock.advance(MINUTE);
    await collectRuns(ctx(memory, shared));
    await collectUrls(ctx(memory, shared));
    expect(counted()['apps.list']).toBeUndefined();
    await collectBackups(ctx(memory, shared));
    expect(counted()['apps.list']).toBe(oneRead);
    // An app asked for that the list does not have (deleted) reads it once, not at every cycle.
    await shared.read(ctx(memory, shared), LABELS_MAX_AGE_MS, new Set([987_654]));
    await shared.read(ctx(memory, shared), LABELS_MAX_AGE_MS, new Set([987_654]));
    expect(counted()['apps.list']).toBe(oneRead);
    clock.advance(LABELS_MAX_AGE_MS + MINUTE);
    await collectUrls(ctx(memory, shared));
    expect(counted()['apps.list']).toBe(oneRead);
  });
});
