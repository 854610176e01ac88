/** Run before every test file (vitest `setupFiles`): what a file started goes with it. */
import { afterAll, inject } from 'vitest';
import { closeFileLeftovers } from './after-file.js';
import { RUN_DIR_VARIABLE } from './run-dir.js';

process.env[RUN_DIR_VARIABLE] = inject('runDir');

afterAll(() => closeFileLeftovers());
