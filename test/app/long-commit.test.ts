import { describe, expect, it } from 'vitest';
import { longCommitWarning } from '../../src/app/long-commit.js';
import { Secret } from '../../src/lib/secret.js';
import type { StateConfig } from '../../src/config/load-config.js';

const BASE = { retention: 30 * 86_400_000, connect_timeout: 10_000, statement_timeout: 30_000 };
const postgres = (leaseMs: number) =>
  ({ ...BASE, url: new Secret('postgres://dw@db/dw'), leader: { lease: leaseMs } }) as StateConfig;
const sqlite = { ...BASE, path: '/var/lib/dw/state.db', leader: { lease: 10_000 } } as StateConfig;

describe('a long state transaction', () => {
  it('is said on PostgreSQL from half of what the leader may wait, with the lease that gives it room', () => {
    // The default 10 s lease: the leader waits 7.5 s; said from 3.75 s on.
    expect(longCommitWarning(3_700, postgres(10_000))).toBeUndefined();
    const said = longCommitWarning(9_000, postgres(10_000));
    expect(said).toContain('took 9000 ms; a leader may wait 7500 ms');
    expect(said).toContain('raise state.leader.lease (to at least 24s for this one)');
    expect(longCommitWarning(3_750, postgres(10_000))).toMatch(/to at least 10s/);
    // A longer lease gives the same transaction room.
    expect(longCommitWarning(9_000, postgres(30_000))).toBeUndefined();
  });

  it('is never said on SQLite, where no leader waits', () => {
    expect(longCommitWarning(60_000, sqlite)).toBeUndefined();
  });

  it('never shows the state URL or its password', () => {
    expect(longCommitWarning(9_000, postgres(10_000))).not.toMatch(/postgres:|dw@db/);
  });
});
