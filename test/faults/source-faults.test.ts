/**
 * Every source, every way an answer can go wrong: 500s, 429 bursts, timeouts, proxy HTML pages,
 * cut-off and mistyped JSON, and lists that shift while paged. Whatever the fault:
 * - the cycle fails whole and the daemon keeps going (no crash, the next cycle runs);
 * - nothing the source had open is resolved, repeated or re-fired (an unread source is not "fixed");
 * - exactly one "cannot read <job>" alert fires, at the `checks.sources.failure_threshold`-th failed
 *   cycle, and not again while the fault lasts;
 * - the first complete read resolves it and leaves the source's own alerts as they were.
 */
import type { Dispatcher } from 'undici';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import type { FaultSpec } from '../../packages/simulator/src/fault-injector.js';
import { advancing, events, faultConfig, firing, manualSim, MINUTE, openWatchdog, tempDir } from './fault-fixture.js';

const THRESHOLD = 3;
/**
 * Simulated time between the cycles under test: short, so the service itself does not change in
 * the meantime (a backup ageing past a threshold would be a true change, not a false resolution).
 */
const STEP = 1_000;
/** Failed cycles run per case: past the threshold, to show the alert does not fire twice. */
const FAILED_CYCLES = THRESHOLD + 2;
/** The checks' config, with `threshold` failed cycles to the "cannot read" alert. */
const extraConfig = (threshold: number) => `checks:
  sources: { failure_threshold: ${threshold} }
  maintenance: { max_duration: 1m }
  attention: { fold_wait: 0s }
  upgrades: { fold_wait: 0s }
jobs: { jitter: 0s }`;
const EXTRA = extraConfig(THRESHOLD);

type Job = 'runs' | 'urls' | 'backups' | 'attention' | 'maintenance';

/** Which function each job's fault is put on. */
const SOURCES: { job: Job; fn: Parameters<RunningSimulator['control']['setFault']>[0] }[] = [
  { job: 'runs', fn: 'runs.list' },
  { job: 'urls', fn: 'urls.list' },
  { job: 'backups', fn: 'backups.list' },
  { job: 'attention', fn: 'attention.list' },
  { job: 'maintenance', fn: 'apps.get' },
];

/**
 * `timeout`: the request timeout of the case (default the fixture's generous 5s). `threshold`: the
 * case's own failure threshold, its failing cycles one more (default {@link THRESHOLD}).
 */
const FAULTS: {
  name: string;
  fault: FaultSpec;
  reason: RegExp;
  timeout?: string;
  waits?: boolean;
  threshold?: number;
}[] = [
  { name: '500 internal_error', fault: { errorCode: 'internal_error' }, reason: /internal_error/ },
  { name: '503 unavailable', fault: { errorCode: 'unavailable' }, reason: /unavailable/ },
  // Each such 429 holds every request back (1 s, doubling up to a minute): a cycle waits it out.
  {
    name: 'a 429 burst without Retry-After',
    fault: { rateLimit: { retryAfter: 'none' } },
    reason: /rate_limited/,
    waits: true,
  },
  // Every failing cycle waits the whole timeout, which the healthy cycles before and after must
  // stay well inside on a loaded machine: 300ms failed them at a load of 15 (the in-process
  // simulator answers on the test's own event loop). So a generous timeout, and fewer failing
  // cycles to wait it out: the threshold at 1, then once more to show it does not fire twice.
  {
    name: 'no answer (timeout)',
    fault: { hang: true },
    reason: /within 1500 ms|timeout/i,
    timeout: '1500ms',
    threshold: 1,
  },
  { name: 'a proxy HTML error page', fault: { html502: true }, reason: /502|not JSON|not_json/i },
  { name: 'JSON cut off in the middle', fault: { malformedJson: true }, reason: /JSON|not_json/i },
  { name: 'a field of the wrong type', fault: { wrongType: true }, reason: /schema|expected/i },
];

let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
let wd: Watchdog | undefined;
let agent: Agent | undefined;

beforeEach(async () => {
  ({ sim, clock } = await manualSim());
  tmp = tempDir();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await agent?.close();
  agent = undefined;
  await sim.close();
  tmp.cleanup();
});

/** Gives every source something to report, so "nothing was resolved" means something. */
function seedProblems(): void {
  const c = sim.control;
  const apps = [...c.state.apps.values()].filter(
    (a) => a.deployedAt !== null && a.state === 'running' && a.urlIds.length > 0,
  );
  const [a, b, d] = [apps[0]!, apps[1]!, apps[2]!];
  c.addRun({ appId: a.id, state: 'error' });
  c.checks.certificates.expire(a.urlIds[0]!, { inDays: 1 });
  c.checks.backups.age(b.id, { hours: 24 * 30 });
  c.checks.maintenance.set(d.id, true);
}

/** Two healthy cycles (the maintenance hold is 1m) and the job's firing alerts after them. */
async function healthy(job: Job): Promise<string[]> {
  await wd!.runOnce([job]);
  clock.advance(2 * MINUTE);
  const report = await wd!.runOnce([job]);
  expect(report.jobs[0]!.outcome).toBe('ok');
  const open = firing(wd!, job);
  expect(open.length, `${job} has something open before the fault`).toBeGreaterThan(0);
  return open;
}

/** Runs the failing cycles and checks what they did and did not write. */
/** One cycle of `job`; with `waits`, the clock moves a second at a time while the cycle waits on it. */
function cycleOf(job: Job, waits = false) {
  return waits ? advancing(clock, wd!.runOnce([job]), 1_000) : wd!.runOnce([job]);
}

async function failingCycles(
  job: Job,
  before: string[],
  reason?: RegExp,
  waits = false,
  threshold = THRESHOLD,
): Promise<void> {
  const startEvent = events(wd!).length;
  const cycles = threshold === THRESHOLD ? FAILED_CYCLES : threshold + 1;
  for (let cycle = 1; cycle <= cycles; cycle++) {
    clock.advance(STEP);
    const report = await cycleOf(job, waits);
    const r = report.jobs[0]!;
    expect(r.outcome, `cycle ${cycle}`).toBe('failed');
    if (reason) expect(r.reason).toMatch(reason);
    expect(r.reason).not.toContain(sim.adminToken);
    const sourceEvents = events(wd!)
      .slice(startEvent)
      .filter((e) => e.fingerprint === `watchdog/source/${job}`);
    // Fires exactly at the threshold, once.
    expect(
      sourceEvents.map((e) => e.kind),
      `cycle ${cycle}`,
    ).toEqual(cycle >= threshold ? ['firing'] : []);
  }
  const written = events(wd!).slice(startEvent);
  expect(written.filter((e) => !e.fingerprint.startsWith('watchdog/'))).toEqual([]);
  expect(firing(wd!, job)).toEqual(before);
}

/** The first complete read: the source alert resolves, the job's own alerts stay as they were. */
async function recovers(job: Job, before: string[], waits = false): Promise<void> {
  const startEvent = events(wd!).length;
  clock.advance(STEP);
  const report = await cycleOf(job, waits);
  expect(report.jobs[0]!.outcome).toBe('ok');
  expect(events(wd!).slice(startEvent)).toEqual([{ kind: 'resolved', fingerprint: `watchdog/source/${job}` }]);
  expect(firing(wd!, job)).toEqual(before);
  expect(firing(wd!, `source:${job}`)).toEqual([]);
}

describe.each(SOURCES)('source $job ($fn)', ({ job, fn }) => {
  // A read by id that does not fit is one record that cannot be parsed: set aside, its alerts held
  // (test/app/watchdog-quarantine.test.ts), not a failed read.
  it.each(FAULTS.filter((f) => !(fn === 'apps.get' && f.fault.wrongType)))(
    '$name: fails whole, resolves nothing, one "cannot read" alert at the threshold, recovery resolves it',
    async ({ fault, reason, timeout, waits, threshold }) => {
      wd = openWatchdog(faultConfig(sim, tmp.dir, { extra: extraConfig(threshold ?? THRESHOLD), timeout }), clock);
      seedProblems();
      const before = await healthy(job);
      sim.control.setFault(fn, fault);
      await failingCycles(job, before, reason, waits, threshold);
      sim.control.clearFaults();
      await recovers(job, before, waits);
    },
  );

  it('a failure shorter than the threshold raises nothing, and the count starts again after a good read', async () => {
    wd = openWatchdog(faultConfig(sim, tmp.dir, { extra: EXTRA }), clock);
    seedProblems();
    const before = await healthy(job);
    const startEvent = events(wd).length;
    for (let round = 0; round < 2; round++) {
      sim.control.setFault(fn, { errorCode: 'internal_error' });
      for (let i = 1; i < THRESHOLD; i++) {
        clock.advance(STEP);
        expect((await wd.runOnce([job])).jobs[0]!.outcome).toBe('failed');
      }
      sim.control.clearFaults();
      clock.advance(STEP);
      expect((await wd.runOnce([job])).jobs[0]!.outcome).toBe('ok');
    }
    expect(events(wd).slice(startEvent)).toEqual([]);
    expect(firing(wd, job)).toEqual(before);
  });
});

describe('a 429 burst shorter than the retries', () => {
  it.each([
    ['Retry-After in seconds', { rateLimit: { retryAfter: 'seconds', seconds: 2 }, times: 2 }],
    ['Retry-After as an HTTP date', { rateLimit: { retryAfter: 'date', seconds: 2 }, times: 2 }],
    ['no Retry-After', { rateLimit: { retryAfter: 'none' }, times: 2 }],
  ] as [string, FaultSpec][])(
    '%s: the read waits, retries and completes; no failure is counted',
    async (_name, fault) => {
      wd = openWatchdog(faultConfig(sim, tmp.dir, { extra: EXTRA, api: '  max_retries: 3' }), clock, {
        apiRetry: { baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0.5 },
      });
      seedProblems();
      const before = await healthy('runs');
      sim.control.setFault('runs.list', fault);
      clock.advance(STEP);
      const report = await advancing(clock, wd.runOnce(['runs']), 500);
      expect(report.jobs[0]!.outcome).toBe('ok');
      expect(sim.control.requests().filter((r) => r.fn === 'runs.list' && r.status === 429)).toHaveLength(2);
      expect(
        wd.store.db.prepare(`SELECT consecutive_failures AS n FROM source_health WHERE job = 'runs'`).get(),
      ).toEqual({ n: 0 });
      expect(firing(wd, 'runs')).toEqual(before);
    },
  );
});

/** The last deployed app: not one `seedProblems` touches. */
function quietApp(s: RunningSimulator): number {
  return [...s.control.state.apps.values()].filter((a) => a.deployedAt !== null).at(-1)!.id;
}

describe('a list that shifts while it is paged', () => {
  /**
   * A dispatcher that changes the list at the service before every page after the first: each walk
   * sees the list move, so no walk is ever consistent while `shifting` is on.
   */
  function shiftingDispatcher(path: string, shift: () => void): { dispatcher: Dispatcher; set(on: boolean): void } {
    agent = new Agent();
    let on = false;
    const dispatcher = agent.compose((dispatch) => (opts, handler) => {
      const p = String(opts.path);
      if (on && p.startsWith(path) && /[?&]offset=[1-9]/.test(p)) shift();
      return dispatch(opts, handler);
    });
    return { dispatcher, set: (v) => (on = v) };
  }

  it.each([
    {
      job: 'runs' as const,
      // Pages of one: after the first cycle the walk reads only down to the newest run it saw (an
      // hour below it), a page or two; of one run each, that is still a walk that can shift.
      pageSize: 1,
      path: '/api/v1/runs?',
      // A finished restart of an app with nothing open, created long ago: it comes below the part
      // read and moves the list there (a run at the head would not), it does not fix anything.
      shift: (s: RunningSimulator) =>
        s.control.addRun({
          appId: quietApp(s),
          action: 'restart',
          state: 'done',
          startedAgoMs: 400 * 24 * 60 * MINUTE,
        }),
    },
    {
      // Many apps whose newest backup is old, and pages large enough that the first leaves more
      // apps missing than pages left, so the walk goes on (with few apps missing the collector
      // reads them one by one instead of walking on).
      job: 'backups' as const,
      pageSize: 200,
      prepare: (s: RunningSimulator) => {
        for (const app of [...s.control.state.apps.values()].filter((a) => a.deployedAt !== null).slice(0, 12))
          s.control.checks.backups.age(app.id, { hours: 24 * 60 });
      },
      path: '/api/v1/backups?',
      // An old backup: below the part read (a new one, at the head, would not move the list there).
      shift: (s: RunningSimulator) => s.control.checks.backups.add(quietApp(s), { hoursAgo: 400 * 24 }),
    },
  ] as {
    job: Job;
    pageSize: number;
    path: string;
    shift: (s: RunningSimulator) => unknown;
    prepare?: (s: RunningSimulator) => void;
  }[])(
    '$job: every walk is thrown away, the cycle fails whole, nothing resolves; a steady list reads again',
    async ({ job, pageSize, path, shift, prepare }) => {
      prepare?.(sim);
      const shifting = shiftingDispatcher(path, () => shift(sim));
      wd = openWatchdog(faultConfig(sim, tmp.dir, { extra: EXTRA, pageSize }), clock, {
        dispatcher: shifting.dispatcher,
      });
      seedProblems();
      const before = await healthy(job);
      shifting.set(true);
      await failingCycles(job, before, /shift|total went|came twice|pagination|walk/i);
      shifting.set(false);
      await recovers(job, before);
    },
  );

  it('runs: a busy service, a new run at the head before every page, fails no cycle', async () => {
    // Newest first, each new run pushes the others down one place: the walk goes on (issue 23).
    const busy = shiftingDispatcher('/api/v1/runs?', () =>
      sim.control.addRun({ appId: quietApp(sim), action: 'restart', state: 'done', startedAgoMs: 0 }),
    );
    wd = openWatchdog(faultConfig(sim, tmp.dir, { extra: EXTRA, pageSize: 5 }), clock, {
      dispatcher: busy.dispatcher,
    });
    seedProblems();
    busy.set(true);
    const added = sim.control.state.runs.size;
    // The first cycle walks the last 7 days, page after page; the next ones read down to the newest seen.
    for (let cycle = 1; cycle <= 3; cycle++) {
      const report = await wd.runOnce(['runs']);
      expect(report.jobs[0]!.outcome, `cycle ${cycle}`).toBe('ok');
      clock.advance(STEP);
    }
    expect(sim.control.state.runs.size - added).toBeGreaterThan(10);
    expect(firing(wd, 'runs').length).toBeGreaterThan(0);
  });
});
