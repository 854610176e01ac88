/** Run before every test file (vitest `setupFiles`): what a file started goes with it. */
import { afterAll } from 'vitest';
import { closeFileLeftovers } from './after-file.js';

afterAll(() => closeFileLeftovers());
