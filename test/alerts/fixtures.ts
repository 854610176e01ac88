/** Shared bits of the alerts tests: a real SQLite store in a temp dir and a finding builder. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { JobKey } from '../../src/alerts/job-key.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import type { Detection, Finding } from '../../src/detectors/finding.js';
import { presented } from '../../src/detectors/registry.js';
import { Store, type StoreOptions } from '../../src/state/store.js';
import { SQLITE_BACKEND, type StateBackend } from '../helpers/state-backends.js';

/** A temp directory and a state (the file `state.db` in it on SQLite); `cleanup` removes both. */
export interface TempState {
  dir: string;
  /** The SQLite file (on SQLite). */
  file: string;
  /** The state's `state:` section for a config file. */
  yaml: string;
  open(options?: StoreOptions): Store;
  cleanup(): void;
}

/** Makes a temp dir and a state on `backend` (SQLite by default); every opened store is closed by `cleanup`. */
export function tempState(backend: StateBackend = SQLITE_BACKEND): TempState {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-alerts-'));
  const state = backend.fresh(dir);
  return {
    dir,
    file: path.join(dir, 'state.db'),
    // Read only when asked: asking first makes an empty database for a command or daemon to
    // migrate, where a store opened first is a copy of the run's migrated template on PostgreSQL
    // (an empty one migrated at each open took 50 s of silences.test.ts's 86 s in a profile).
    get yaml() {
      return state.yaml;
    },
    open: (options) => state.open(options),
    cleanup() {
      state.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A finding for fingerprint `id` with sensible defaults, presented by its check unless `overrides` gives facts. */
export function finding(id: string, overrides: Partial<Finding> = {}): Finding {
  const { facts, ...rest } = overrides;
  const detection: Detection = {
    fingerprint: id,
    check: 'failed_runs',
    severity: 'warning',
    summary: `Problem ${id}`,
    details: { run: `#${id}` },
    labels: { check: overrides.check ?? 'failed_runs', app: 'shop', environment_type: 'staging' },
    url: 'https://shop.example.com',
    since: '2026-11-01T11:00:00Z',
    subject: { type: 'run', id: 1 },
    ...rest,
  };
  return facts ? { ...detection, facts } : presented(detection);
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/**
 * Puts `findings` in the state file `file` as firing alerts of `job`, as one daemon cycle would
 * (for: 1), for the commands that read the state file.
 */
export function fireFindings(file: string, job: JobKey, findings: Finding[]): void {
  const store = Store.open(file);
  try {
    store.transaction(() =>
      applyFindings(store, { job, findings, now: Date.now() }, { forCycles: 1, repeatIntervalMs: 4 * HOUR }),
    );
  } finally {
    store.close();
  }
}
