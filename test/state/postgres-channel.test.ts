/** The main thread's end of the PostgreSQL worker, where no server is needed to see it. */
import { describe, expect, it } from 'vitest';
import { LIMIT_CODE, PostgresChannel } from '../../src/state/postgres-channel.js';

describe('PostgresChannel', () => {
  it('says a request whose limit had already passed was never sent, not that it waited 0ms', () => {
    // No server at this address: a request that were sent would fail otherwise.
    const channel = new PostgresChannel({
      url: 'postgres://nobody@127.0.0.1:1/none',
      ssl: undefined,
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
      lockTimeoutMs: 1_000,
      idleInTransactionTimeoutMs: 1_000,
    });
    const reply = channel.request({ op: 'exec', text: 'SELECT 1' }, false, { limitMs: 0 });
    expect(reply).toMatchObject({ ok: false, error: { code: LIMIT_CODE } });
    expect(!reply.ok && reply.error.message).toBe(
      'no time left to ask PostgreSQL: the limit had passed before it was sent',
    );
    channel.close();
  });
});
