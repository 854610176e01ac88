/**
 * The order the two workers take the test files in: the known slowest first, then vitest's own.
 *
 * Vitest orders by the durations of the last run it cached, and with no cache (a fresh clone, CI)
 * by file size, largest first. The slowest files are not the largest: the database outage, the
 * failover and the partition are small files of real processes waiting on real leases, and on a
 * fresh clone they started late, so the run ended with one worker alone on a two-minute file while
 * the other idled. Started first, they run beside the many short files instead of after them.
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files measured alone on a quiet 2-core machine (ms; vitest's per-file time), the slowest first.
 * Only the order matters; a file missing here is placed by vitest's own rule after these.
 */
const KNOWN_SLOWEST: Record<string, number> = {
  'test/faults/database-outage.test.ts': 150_000,
  'test/faults/failover.test.ts': 74_000,
  'test/faults/partition.test.ts': 26_000,
  'test/state/postgres-store.test.ts': 26_000,
  'test/state/leader-lease.test.ts': 25_000,
  'test/faults/stop-under-faults.test.ts': 22_500,
  'test/faults/channels-down.test.ts': 22_000,
  'test/server/health-server.test.ts': 21_000,
  'test/alerts/lifecycle.test.ts': 20_500,
  'packages/simulator/test/demo/demo-command.test.ts': 20_400,
  'test/app/other-service.test.ts': 20_300,
  'test/server/front-door.test.ts': 19_600,
  'test/container/fresh-clone.test.ts': 19_100,
  'test/console/console-thread.test.ts': 18_500,
  'test/cli/migrate-state.test.ts': 18_400,
  'test/faults/crash-restart.test.ts': 18_200,
  'test/cli/run-postgres.test.ts': 17_000,
};

/** Vitest's sequencer with {@link KNOWN_SLOWEST} moved to the front, slowest first. */
export class SlowestFirstSequencer extends BaseSequencer {
  /** The files it moves, and their measured times (a test checks that each still exists). */
  static readonly known: Readonly<Record<string, number>> = KNOWN_SLOWEST;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const theirs = await super.sort(files);
    const root = this.ctx.config.root;
    const known = (spec: TestSpecification) =>
      KNOWN_SLOWEST[path.relative(root, spec.moduleId).split(path.sep).join('/')] ?? 0;
    return theirs
      .map((spec, index) => ({ spec, index, ms: known(spec) }))
      .sort((a, b) => b.ms - a.ms || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
