import { describe, expect, it } from 'vitest';
import { longCommitWarning } from '../../src/app/long-commit.js';
import { Secret } from '../../src/lib/secret.js';
import type { StateConfig } from '../../src/config/load-config.js';

const BASE = { retention: 30 * 86_400_000, connect_timeout: 10_000, statement_timeout: 30_000 };
const postgres = (leaseMs: number) =>
  ({ ...BASE, url: new Secret('postgres://dw@db/dw'), leader: { lease: leaseMs } }) as StateConfig;
const sqlite = { ...BASE, path: '/var/lib/dw/state.db', leader: { lease: 10_000 } } as StateConfig;

describe('a long state transaction', () => {
  it('is said on PostgreSQL from half of its room (half the lease), with a lease 4 times it', () => {
    // The default 10 s lease: a transaction has 5 s at worst; said from 2.5 s on.
    expect(longCommitWarning(2_400, postgres(10_000))).toBeUndefined();
    const said = longCommitWarning(2_600, postgres(10_000));
    expect(said).toContain('took 2600 ms');
    expect(said).toContain('from 5000 ms (half of state.leader.lease) it may step down');
    expect(said).toContain('raise state.leader.lease to at least 11s (4 times this transaction)');
    // A longer lease gives the same transaction room.
    expect(longCommitWarning(2_600, postgres(30_000))).toBeUndefined();
  });

  it('cut by the step-down, is said asking for more than 4 times what it had', () => {
    const said = longCommitWarning(1_100, postgres(2_000), true);
    expect(said).toContain('was cut after 1100 ms');
    expect(said).toContain('stepped down with the cycle undone');
    expect(said).toContain('Raise state.leader.lease to more than 5s');
    // Refused at its start (the deadline passed before it): not the transaction's to answer for.
    expect(longCommitWarning(0, postgres(2_000), true)).toBeUndefined();
    expect(longCommitWarning(400, postgres(2_000), true)).toBeUndefined();
  });

  it('is never said on SQLite, where no leader waits', () => {
    expect(longCommitWarning(60_000, sqlite)).toBeUndefined();
    expect(longCommitWarning(60_000, sqlite, true)).toBeUndefined();
  });

  it('never shows the state URL or its password', () => {
    expect(longCommitWarning(9_000, postgres(10_000))).not.toMatch(/postgres:|dw@db/);
    expect(longCommitWarning(9_000, postgres(10_000), true)).not.toMatch(/postgres:|dw@db/);
  });
});
