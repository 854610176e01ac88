/** Run before every test file (vitest `setupFiles`): what a file started goes with it. */
import { afterAll, inject } from 'vitest';
import { closeFileLeftovers } from './after-file.js';
import { THREAD_BUILD_VARIABLE } from '../../src/lib/worker-entry.js';
import { RUN_DIR_VARIABLE } from './run-dir.js';
import { TEST_BUILD_DIR } from './test-build.js';

process.env[RUN_DIR_VARIABLE] = inject('runDir');
// Threads start from the run's build of the sources (made by the global setup), not through tsx.
process.env[THREAD_BUILD_VARIABLE] = TEST_BUILD_DIR;

afterAll(() => closeFileLeftovers());
