import { defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './test/helpers/slowest-first-sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Three on two cores: a file keeps 0.7-0.9 of a core busy on average (its daemons, servers and
    // PostgreSQL included), the rest is waiting on leases, timers and children; a third worker
    // fills those waits. The 20 slowest files, twice each, on a machine loaded by other work
    // (load 6-9): 2 workers 449s and 389s, 3 workers 311s and 356s, every test passing.
    maxWorkers: 3,
    // The workers run every file in turn, sharing the modules they imported: a fresh process
    // per file re-imported the product and its libraries each time, about a second of CPU per file
    // (58 files of detectors, api, lib, config and collectors: 114 s of CPU isolated, 42 s not).
    // What a file starts it stops (test/helpers/setup.ts closes its leftovers after it); nothing
    // in src/ keeps state in a module of its own beyond caches and a scratch buffer.
    isolate: false,
    // The longest files first, even on a fresh clone with no durations cached: see the sequencer.
    sequence: { sequencer: SlowestFirstSequencer },
    reporters: ['default'],
  },
});
