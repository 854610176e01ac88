/** The state file's runner lease: one run or check at a time, and no wait after a crash on this host. */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claimLease,
  LEASE_TTL_MS,
  LeaseHeldError,
  LeaseLostError,
  type LeaseHolder,
} from '../../src/state/runner-lease.js';
import type { Store } from '../../src/state/store.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

let state: TestState;

/** Another connection to the same state, as another process would have. */
function open(): Store {
  return state.open();
}

/** Writes a lease as another holder would have left it. */
function leftBy(holder: Partial<LeaseHolder>): void {
  const value: LeaseHolder = {
    id: 'other',
    command: 'run',
    pid: 1,
    host: 'elsewhere',
    started: 0,
    until: Date.now() + LEASE_TTL_MS,
    ...holder,
  };
  open()
    .db.prepare(
      `INSERT INTO meta (key, value) VALUES ('runner_lease', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    )
    .run(JSON.stringify(value));
}

/** A process of this host that is alive for the test. */
async function livingPid(): Promise<{ pid: number; kill(): void }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  await new Promise((r) => child.once('spawn', r));
  return { pid: child.pid!, kill: () => child.kill('SIGKILL') };
}

describe.each(STATE_BACKENDS)('runner lease on $name', (backend) => {
  beforeEach(() => {
    state = backend.fresh();
  });
  afterEach(() => state.cleanup());

  it('refuses a second holder while the first holds it, naming it, and lets one in once it is released', () => {
    const first = claimLease(open(), 'run');
    expect(() => claimLease(open(), 'check')).toThrow(LeaseHeldError);
    expect(() => claimLease(open(), 'check')).toThrow(
      /deploy-watchdog run \(pid \d+ on .+\) is working on this state file; a check now would send what it sends twice/,
    );
    first.release();
    claimLease(open(), 'check').release();
  });

  it.each([
    ['run', 'check', /is working on this state file; a check now would send what it sends twice/],
    ['check', 'run', /is working on this state file; a second daemon would send every message twice/],
    [
      'run',
      'migrate-state',
      /is working on this state file; a copy now would leave out what it writes from now on\. Stop it first \(one killed on another host leaves the file after 30 s\)$/,
    ],
    [
      'migrate-state',
      'run',
      /^deploy-watchdog migrate-state \(pid \d+ on .+\) is working on this state file; it is copying the state to PostgreSQL\. Wait until it is done, then start the daemon on state\.url$/,
    ],
  ] as const)('tells a %s holder from what %s would do, and what to do instead', (holder, wanted, message) => {
    const first = claimLease(open(), holder);
    expect(() => claimLease(open(), wanted)).toThrow(message);
    first.release();
  });

  it.each([
    ['expired', { until: Date.now() - 1 }],
    ['left by a process of this host that is no longer alive', { host: os.hostname(), pid: 2 ** 22 + 12_345 }],
    ['left by an earlier run with this very pid (a container restarted)', { host: os.hostname(), pid: process.pid }],
  ])('takes over a lease %s', (_what, holder) => {
    leftBy(holder);
    claimLease(open(), 'run').release();
  });

  it('waits out a live holder of this host, and one of another host until it expires', async () => {
    const other = await livingPid();
    try {
      leftBy({ host: os.hostname(), pid: other.pid });
      expect(() => claimLease(open(), 'run')).toThrow(LeaseHeldError);
    } finally {
      other.kill();
    }
    leftBy({ host: 'elsewhere', pid: process.pid });
    expect(() => claimLease(open(), 'run')).toThrow(/a second daemon would send every message twice/);
    expect(() => claimLease(open(), 'run', () => Date.now() + LEASE_TTL_MS + 1)).not.toThrow();
  });

  it('is still held on this host when the wall clock steps forward past its term', () => {
    const first = claimLease(open(), 'run');
    // NTP or a resumed VM moved the wall clock an hour on: the holder is alive and renewing.
    expect(() => claimLease(open(), 'check', () => Date.now() + 3_600_000)).toThrow(LeaseHeldError);
    first.release();
  });

  it('is renewed: still held after its first term, while renewed', () => {
    let now = Date.now();
    const lease = claimLease(
      open(),
      'run',
      () => now,
      () => now,
    );
    now += LEASE_TTL_MS - 1;
    lease.renew();
    now += LEASE_TTL_MS - 1;
    expect(() =>
      claimLease(
        open(),
        'check',
        () => now,
        () => now,
      ),
    ).toThrow(LeaseHeldError);
  });

  it('once another took it over (this one stalled past it), a renewal does not take it back', () => {
    // A stall: the wall clock and the host's monotonic clock both move on.
    let now = Date.now();
    const stalled = claimLease(
      open(),
      'run',
      () => now,
      () => now,
    );
    now += LEASE_TTL_MS + 1;
    const next = claimLease(
      open(),
      'check',
      () => now,
      () => now,
    );
    expect(() => stalled.renew()).toThrow(LeaseLostError);
    expect(() => stalled.renew()).toThrow(
      /^deploy-watchdog check \(pid \d+ on .+\) took over this state file: this process had not renewed its lease for 30 s/,
    );
    // Still the other's: neither the renewal nor the stalled one's release took it.
    stalled.release();
    expect(() =>
      claimLease(
        open(),
        'run',
        () => now,
        () => now,
      ),
    ).toThrow(/deploy-watchdog check \(pid \d+/);
    next.release();
    claimLease(
      open(),
      'run',
      () => now,
      () => now,
    ).release();
  });
});
