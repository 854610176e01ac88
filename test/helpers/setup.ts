/** Run before every test file (vitest `setupFiles`): what each file's own servers need after it. */
import { afterAll } from 'vitest';
import { closeTestCluster } from './state-backends.js';

// The PostgreSQL server a file's store tests started (if any) goes with the file.
afterAll(() => closeTestCluster());
