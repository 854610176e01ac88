/**
 * The demo's estate and story against a real simulator, without the daemon and without waiting:
 * healing leaves no problem, the cast is usable on any estate size, each step stages or clears
 * exactly its problem, and the runner plays steps in order on a ManualClock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { castDemo } from '../../src/demo/demo-cast.js';
import { healEstate } from '../../src/demo/heal-estate.js';
import { buildScenario, type DemoProblemKind, type Scenario } from '../../src/demo/scenario.js';
import { ScenarioRunner } from '../../src/demo/scenario-runner.js';
import { jobPeriodSeconds } from '../../src/demo/run-demo.js';
import { ManualClock } from '../../../../test/helpers/manual-clock.js';
import { BAD_SERVER_STATES } from '../../../../src/config/state-words.js';
import { startSimulator, type RunningSimulator } from '../../src/index.js';
import type { ProblemKind } from '../../src/problem-finder.js';

const started: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function simulator(apps: number, seed: number, clock = new ManualClock()): Promise<RunningSimulator> {
  const sim = await startSimulator({ apps, seed, clock });
  started.push(sim);
  return sim;
}

/** The simulator's own problem kinds each staged problem shows up as. */
const SHOWS_AS: Record<DemoProblemKind, ProblemKind[]> = {
  failed_run: ['failed_run'],
  certificate: ['certificate_expiring'],
  stale_backup: ['backup_stale'],
  offsite: ['offsite_failed'],
  url_check: ['public_check_failed'],
};

describe('healEstate', () => {
  it.each([
    [12, 1],
    [12, 2],
    [12, 3],
    [40, 7],
    [200, 5],
  ])('leaves no problem and no run under way (%i apps, seed %i)', async (apps, seed) => {
    const sim = await simulator(apps, seed);
    expect(sim.control.problems().length).toBeGreaterThan(0);
    const report = healEstate(sim.control);
    expect(report.fixed.length).toBeGreaterThan(0);
    expect(report.remaining).toEqual([]);
    expect(sim.control.problems()).toEqual([]);
    expect(sim.control.state.activeRuns.size).toBe(0);
    const withoutBackup = [...sim.control.state.apps.values()].filter(
      (a) =>
        a.state !== 'deleted' &&
        a.state !== 'disabled' &&
        !sim.control.state.backupIndex.byApp(a.id).some((b) => b.state === 'done'),
    );
    expect(withoutBackup.map((a) => a.name)).toEqual([]);
    expect([...sim.control.state.servers.values()].filter((s) => BAD_SERVER_STATES.includes(s.state))).toEqual([]);
    const live = [...sim.control.state.apps.values()];
    expect({
      deletedUpstream: live.filter((a) => a.repositories.some((r) => r.deletedUpstream)).length,
      upgrades: live.filter((a) => a.upgrade && a.upgrade.state !== 'testing').length,
      held: [...sim.control.state.restorePoints.values()].filter((p) => p.held).length,
      installers: [...sim.control.state.installers.values()].filter((i) => i.state === 'error').length,
    }).toEqual({ deletedUpstream: 0, upgrades: 0, held: 0, installers: 0 });
  });
});

describe('castDemo', () => {
  it('puts the production problems on distinct production apps and the run on staging (12 apps)', async () => {
    const sim = await simulator(12, 1);
    const cast = castDemo(sim.control);
    expect(cast.runApp.environmentType).toBe('staging');
    const production = [cast.certificate.app, cast.staleApp, cast.offsiteApp, cast.publicCheck.app];
    expect(production.every((a) => a.environmentType === 'production')).toBe(true);
    expect(new Set(production.map((a) => a.id)).size).toBe(4);
  });

  it.each([1, 2, 3, 5])('finds a cast on a tiny estate (%i apps)', async (apps) => {
    const sim = await simulator(apps, 1);
    const cast = castDemo(sim.control);
    expect(cast.certificate.url).toMatch(/^https:\/\//);
    expect(cast.publicCheck.url).toMatch(/^https:\/\//);
  });
});

describe('buildScenario', () => {
  it('stages each problem with its start step and clears it with its clear step', async () => {
    const sim = await simulator(12, 1);
    healEstate(sim.control);
    const scenario = buildScenario(castDemo(sim.control), 'retry-policy');
    const kinds = () => new Set(sim.control.problems().map((p) => p.kind));

    for (const step of scenario.steps.filter((s) => s.phase === 'start')) step.act(sim.control);
    for (const [problem, shows] of Object.entries(SHOWS_AS)) {
      for (const kind of shows) expect(kinds(), `${problem} shows as ${kind}`).toContain(kind);
    }
    // The run clears only once it is running again (retried), as the policy would make it.
    const runClear = scenario.steps.find((s) => s.problem === 'failed_run' && s.phase === 'clear');
    expect(runClear?.when?.(sim.control)).toBe(false);
    const failed = sim.control.problems().find((p) => p.kind === 'failed_run');
    sim.control.setRunState(failed!.id, { state: 'running' });
    expect(runClear?.when?.(sim.control)).toBe(true);

    for (const step of scenario.steps.filter((s) => s.phase === 'clear')) step.act(sim.control);
    expect(sim.control.problems()).toEqual([]);
  });

  it('names five problems, one remediated, each with its app', async () => {
    const sim = await simulator(12, 1);
    const cast = castDemo(sim.control);
    const { problems } = buildScenario(cast, 'retry-policy');
    expect(problems.map((p) => [p.kind, p.check, p.remediated])).toEqual([
      ['failed_run', 'failed_runs', true],
      ['certificate', 'certificates', false],
      ['stale_backup', 'backups', false],
      ['offsite', 'backups', false],
      ['url_check', 'url_checks', false],
    ]);
    expect(problems[0]?.app).toBe(cast.runApp.name);
  });
});

describe('ScenarioRunner', () => {
  /** A tiny story of three steps, one waiting on a condition. */
  function story(flag: { ready: boolean }, log: string[]): Scenario {
    const step = (at: number, name: string, when?: () => boolean) => ({
      at,
      problem: 'certificate' as const,
      phase: 'start' as const,
      says: name,
      ...(when ? { when, holdFor: 0.1 } : {}),
      act: () => void log.push(name),
    });
    return { problems: [], steps: [step(0.5, 'middle'), step(0.1, 'early'), step(0.2, 'waits', () => flag.ready)] };
  }

  /** Moves the ManualClock on in small steps while the runner sleeps on it. */
  async function drive(clock: ManualClock, until: Promise<unknown>, stepMs = 100): Promise<void> {
    let done = false;
    void until.finally(() => (done = true));
    while (!done) {
      await new Promise((r) => setImmediate(r));
      clock.advance(stepMs);
    }
  }

  it('plays steps in time order, a conditional one once its condition has held long enough', async () => {
    const clock = new ManualClock();
    const sim = await simulator(3, 1, clock);
    const flag = { ready: false };
    const log: string[] = [];
    const runner = new ScenarioRunner(story(flag, log), sim.control, clock, {
      onStep: (s, elapsed) => {
        if (s.says === 'middle') flag.ready = true;
        log.push(`at ${Math.round(elapsed / 100) * 100}`);
      },
    });
    const run = runner.run({ durationMs: 10_000, tickMs: 100 });
    await drive(clock, run);
    const outcome = await run;
    expect(outcome.ending).toBe('completed');
    // "waits" is due at 2 s, but its condition holds only once "middle" has happened (5 s): it is
    // first seen holding on the next tick (5.1 s) and must hold 1 s (0.1 of 10 s) more.
    expect(log).toEqual(['early', 'at 1000', 'middle', 'at 5000', 'waits', 'at 6100']);
    expect(outcome.pending).toEqual([]);
  });

  it('settles: keeps going after the timeline until told, and gives up after settleMs', async () => {
    const clock = new ManualClock();
    const sim = await simulator(3, 1, clock);
    const never = new ScenarioRunner(story({ ready: false }, []), sim.control, clock);
    const run = never.run({ durationMs: 1_000, tickMs: 100, settled: () => false, settleMs: 2_000 });
    await drive(clock, run);
    const outcome = await run;
    expect(outcome.ending).toBe('settle_timeout');
    expect(outcome.pending.map((s) => s.says)).toEqual(['waits']);
  });

  it('stops when its signal aborts and says so', async () => {
    const clock = new ManualClock();
    const sim = await simulator(3, 1, clock);
    const abort = new AbortController();
    const runner = new ScenarioRunner(story({ ready: false }, []), sim.control, clock, {
      onStep: () => abort.abort(new Error('Ctrl-C')),
    });
    const run = runner.run({ durationMs: 10_000, tickMs: 100, signal: abort.signal });
    await drive(clock, run);
    const outcome = await run;
    expect(outcome.ending).toBe('aborted');
    expect(outcome.done.map((s) => s.says)).toEqual(['early']);
  });
});

describe('jobPeriodSeconds', () => {
  it.each([
    [5_000, 1],
    [20_000, 1],
    [45_000, 2],
    [60_000, 3],
    [80_000, 4],
    [120_000, 5],
    [3_600_000, 5],
  ])('%i ms of demo → every %i s (a divisor of 60)', (durationMs, seconds) => {
    expect(jobPeriodSeconds(durationMs)).toBe(seconds);
  });
});
