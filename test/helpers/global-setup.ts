/**
 * Run once per `vitest run` (vitest `globalSetup`), in vitest's own process: gives the run a
 * folder for what its test files share (the PostgreSQL cluster of test/helpers/postgres.ts,
 * started here when PostgreSQL is installed) and stops and removes it all after the last file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startSharedPostgres, stopSharedPostgres } from './postgres.js';
import { buildSources } from './test-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder (see test/helpers/postgres.ts `RUN_DIR_VARIABLE`). */
    runDir: string;
  }
}

/**
 * Makes the run's folder and hands it to every test file, and compiles the sources the spawned
 * daemons and the threads run from (test/helpers/test-build.ts); the teardown it returns removes
 * the folder.
 */
export default function globalSetup(project: TestProject): () => void {
  buildSources();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-test-run-'));
  project.provide('runDir', runDir);
  startSharedPostgres(runDir);
  return () => {
    try {
      stopSharedPostgres(runDir);
    } finally {
      fs.rmSync(runDir, { recursive: true, force: true });
    }
  };
}
