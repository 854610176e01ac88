/** Shared bits of the alerts tests: a real SQLite store in a temp dir and a finding builder. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { JobKey } from '../../src/alerts/commit-findings.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import type { Detection, Finding } from '../../src/detectors/finding.js';
import { presented } from '../../src/detectors/registry.js';
import { Store } from '../../src/state/store.js';

/** A temp directory holding a state file; `cleanup` removes it. */
export interface TempState {
  dir: string;
  file: string;
  open(): Store;
  cleanup(): void;
}

/** Makes a temp dir for a state database; every opened store is closed by `cleanup`. */
export function tempState(): TempState {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-alerts-'));
  const file = path.join(dir, 'state.db');
  const opened: Store[] = [];
  return {
    dir,
    file,
    open() {
      const store = Store.open(file);
      opened.push(store);
      return store;
    },
    cleanup() {
      for (const s of opened) s.close();
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
