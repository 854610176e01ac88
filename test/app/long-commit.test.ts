import { describe, expect, it } from 'vitest';
import { cutCommitWarning } from '../../src/app/long-commit.js';
import { Secret } from '../../src/lib/secret.js';
import type { StateConfig } from '../../src/config/load-config.js';

const BASE = { retention: 30 * 86_400_000, connect_timeout: 10_000, statement_timeout: 30_000 };
const postgres = (leaseMs: number) =>
  ({ ...BASE, url: new Secret('postgres://dw@db/dw'), leader: { lease: leaseMs } }) as StateConfig;
const sqlite = { ...BASE, path: '/var/lib/dw/state.db', leader: { lease: 10_000 } } as StateConfig;

describe("a state transaction the leader's step-down cut", () => {
  it('is said as the loss of the cycle, with what a longer lease would give', () => {
    const said = cutCommitWarning(6_800, postgres(10_000));
    expect(said).toContain('was cut after 6800 ms when the leader stepped down');
    expect(said).toContain('nothing of this cycle was written or told, and the next leader reads it again');
    expect(said).toContain('a longer state.leader.lease gives it more room');
  });

  it('refused at its start (under a quarter of the lease), is left to the step-down line', () => {
    expect(cutCommitWarning(0, postgres(2_000))).toBeUndefined();
    expect(cutCommitWarning(400, postgres(2_000))).toBeUndefined();
    expect(cutCommitWarning(500, postgres(2_000))).toBeDefined();
  });

  it('is never said on SQLite, where no leader waits', () => {
    expect(cutCommitWarning(60_000, sqlite)).toBeUndefined();
  });

  it('never shows the state URL or its password', () => {
    expect(cutCommitWarning(9_000, postgres(10_000))).not.toMatch(/postgres:|dw@db/);
  });
});
