/**
 * What only PostgreSQL can do to the store, on a real server: not be there, refuse the login, lack
 * the database, hold the write lock elsewhere, take too long, go away in the middle of a
 * transaction, stop answering, and speak TLS. Each time a StoreError with the cause in words, the
 * URL without its password, nothing half-written, and the store usable again once the server is.
 */
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { Store, type PostgresTarget } from '../../src/state/store.js';
import { StoreError } from '../../src/state/store-error.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

let pg: PostgresCluster;
const opened: Store[] = [];
const databases: string[] = [];

beforeAll(() => {
  pg = startPostgres();
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  pg.start();
  for (const d of databases.splice(0)) pg.dropDatabase(d);
});
afterAll(() => pg.close());

/**
 * A new database's URL: a copy of the cluster's migrated template unless `empty` (what a store
 * opens there is the same; migrating each took a second or more of round trips on a loaded machine).
 */
function freshUrl(empty = false): string {
  const name = pg.createDatabase({ migrated: !empty });
  databases.push(name);
  return pg.url(name);
}

function target(url: string, over: Partial<PostgresTarget> = {}): PostgresTarget {
  return { url: new Secret(url), connectTimeoutMs: 2_000, statementTimeoutMs: 5_000, ...over };
}

function open(url: string, over: Partial<PostgresTarget> = {}, options: Parameters<typeof Store.openPostgres>[1] = {}) {
  const store = Store.openPostgres(target(url, over), options);
  opened.push(store);
  return store;
}

/** The StoreError `fn` throws; its message never holds the password. */
function storeError(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    expect(String(err)).not.toContain(pg.password);
    expect(JSON.stringify(err)).not.toContain(pg.password);
    return err as StoreError;
  }
  throw new Error('expected a StoreError');
}

/** Retries `fn` until it no longer throws a StoreError (the store's fail-fast spell after a lost connection), at most 20s. */
function once<T>(fn: () => T): T {
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof StoreError) || Date.now() > until) throw err;
    }
  }
}

describe('opening a PostgreSQL state', () => {
  it.each([
    {
      name: 'nobody listening on the port',
      url: () => `postgres://watchdog:${pg.password}@127.0.0.1:1/x`,
      reason: 'unreachable',
      message: /postgres:\/\/watchdog@127\.0\.0\.1:1\/x: PostgreSQL cannot be reached.*ECONNREFUSED/,
    },
    {
      name: 'a wrong password',
      url: () => `postgres://watchdog:wrong-${pg.password}@127.0.0.1:${pg.port}/postgres`,
      reason: 'refused',
      message: /PostgreSQL refused the login \(password authentication failed for user "watchdog"\)/,
    },
    {
      name: 'a database that does not exist',
      url: () => pg.url('nowhere'),
      reason: 'missing',
      message: /the database does not exist \(create it, or fix state\.url\)/,
    },
  ])('$name: a StoreError ($reason) naming the URL without its password', ({ url, reason, message }) => {
    const err = storeError(() => open(url()));
    expect(err.reason).toBe(reason);
    expect(err.message).toMatch(message);
  });

  it('an empty database, for a command that only reads a state: missing, and no tables made', () => {
    const url = freshUrl(true);
    const err = storeError(() => open(url, {}, { mustExist: true }));
    expect(err.reason).toBe('missing');
    expect(err.message).toMatch(/holds no deploy-watchdog state; is state\.url right\?/);
    expect(open(url, {}, { migrations: [] }).db.tableColumns('schema_migrations')).toBeDefined();
  });

  it('a server that accepts the connection and never answers: unreachable within connect_timeout', async () => {
    // The kernel accepts on the listening socket; nothing ever answers.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const err = storeError(() =>
        open(`postgres://watchdog:${pg.password}@127.0.0.1:${port}/x`, { connectTimeoutMs: 1_000 }),
      );
      expect(err.reason).toBe('unreachable');
      expect(err.message).toMatch(/timeout/i);
    } finally {
      silent.close();
    }
  });
});

describe('a PostgreSQL state in use', () => {
  it('a statement past statement_timeout is canceled by the server: timeout, and the store goes on', () => {
    const store = open(freshUrl(), { statementTimeoutMs: 1_000 });
    const err = storeError(() => store.db.prepare('SELECT pg_sleep(3)').get());
    expect(err.reason).toBe('timeout');
    expect(err.message).toMatch(/longer than state\.statement_timeout/);
    store.setMeta('after', 'yes');
    expect(store.getMeta('after')).toBe('yes');
  });

  it('a server that stops answering in the middle: unreachable once the wait is over, then a new connection', () => {
    const store = open(freshUrl(), { connectTimeoutMs: 1_000, statementTimeoutMs: 1_000 });
    // statement_timeout switched off for this one statement: only the store's own wait can end it.
    const err = storeError(() => store.db.exec('SET statement_timeout = 0; SELECT pg_sleep(30)'));
    expect(err.reason).toBe('unreachable');
    expect(err.message).toMatch(/no answer from PostgreSQL within 4s/);
    once(() => store.setMeta('after', 'yes'));
    expect(store.getMeta('after')).toBe('yes');
  });

  it("a wait past the owner's limit (a leader's deadline) fails as the owner says, at the limit, and the store goes on", () => {
    let deadline = Date.now() + 600_000;
    const cut: string[] = [];
    const store = open(
      freshUrl(),
      {},
      {
        waitLimit: {
          leftMs: () => deadline - Date.now(),
          exceeded: () => {
            cut.push('deadline');
            return new Error('deposed at the deadline');
          },
        },
      },
    );
    store.setMeta('before', 'yes');
    deadline = Date.now() + 1_000;
    const started = Date.now();
    // The server would take 30s, and its statement_timeout is off: only the limit ends the wait.
    expect(() => store.db.exec('SET statement_timeout = 0; SELECT pg_sleep(30)')).toThrow('deposed at the deadline');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(cut).toEqual(['deadline']);
    // Past the limit nothing is even sent; with a new one, a new connection.
    expect(() => store.getMeta('before')).toThrow('deposed at the deadline');
    deadline = Date.now() + 60_000;
    expect(store.getMeta('before')).toBe('yes');
  });

  it('a statement aside runs outside the transaction on a connection of its own; its failure is its own', () => {
    const asides: unknown[] = [];
    let ask: string | undefined;
    const store = open(
      freshUrl(),
      {},
      {
        waitLimit: {
          leftMs: () => undefined,
          exceeded: () => new Error('never cut'),
          keepUp: (aside) => {
            if (ask === undefined) return;
            const sql = ask;
            ask = undefined;
            try {
              asides.push(aside(sql, { key: 'inside' }));
            } catch (err) {
              asides.push(err);
            }
          },
        },
      },
    );
    store.transaction(() => {
      store.setMeta('inside', 'not yet committed');
      // Asked before the next wait: another connection does not see the transaction's write.
      ask = 'SELECT count(*)::int AS n FROM meta WHERE key = @key';
      expect(store.getMeta('inside')).toBe('not yet committed');
      // A failing statement aside fails alone: the transaction goes on and commits.
      ask = 'SELECT no_such_column FROM meta WHERE key = @key';
      store.setMeta('after', 'the failure aside');
      expect(store.getMeta('after')).toBe('the failure aside');
    });
    expect(asides[0]).toEqual([{ n: 0 }]);
    // A statement's own error, as any of the store's: the server's words and SQLSTATE.
    expect(asides[1]).toMatchObject({ code: '42703', message: expect.stringMatching(/no_such_column/) });
    expect(String(asides[1])).not.toContain(pg.password);
    expect(store.getMeta('inside')).toBe('not yet committed');
    expect(store.getMeta('after')).toBe('the failure aside');
  });

  it('a probe of the state waits at most its own limit: a timeout, and the store goes on', () => {
    const store = open(freshUrl());
    const started = Date.now();
    const err = storeError(() => store.within(500, () => store.db.exec('SELECT pg_sleep(30)')));
    expect(err.reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
    // A new worker and connection (slow to start from the sources on a loaded machine).
    expect(store.ping(30_000)).toBe(true);
    store.setMeta('after', 'yes');
    expect(store.getMeta('after')).toBe('yes');
  });

  it('a ping asks the server even while statements fail fast after a failure, and an answer ends that spell', () => {
    const store = open(freshUrl(), { connectTimeoutMs: 1_000 });
    store.setMeta('before', 'yes');
    pg.stop();
    expect(() => store.getMeta('before')).toThrow(StoreError);
    expect(store.ping(1_000)).toBe(false);
    pg.start();
    expect(store.ping(30_000)).toBe(true);
    expect(store.getMeta('before')).toBe('yes');
  });

  it('another process holding the write lock past the busy timeout: locked, and its transaction unharmed', () => {
    const url = freshUrl();
    const holder = open(url);
    const waiter = open(url, {}, { busyTimeoutMs: 200 });
    const err = holder.transaction(() => {
      holder.setMeta('holder', 'writing');
      return storeError(() => waiter.transaction(() => waiter.setMeta('waiter', 'wrote')));
    });
    expect(err.reason).toBe('locked');
    expect(err.message).toMatch(/locked by another process/);
    expect([holder.getMeta('holder'), holder.getMeta('waiter')]).toEqual(['writing', undefined]);
    waiter.transaction(() => waiter.setMeta('waiter', 'wrote'));
    expect(holder.getMeta('waiter')).toBe('wrote');
  });

  it.each([
    ['fast', 'the server shuts down (sessions told)'],
    ['immediate', 'the server crashes'],
  ] as const)(
    '%s: %s in the middle of a transaction: unreachable, nothing of it written, usable once back',
    (mode, _what) => {
      const store = open(freshUrl());
      store.setMeta('before', 'kept');
      const err = storeError(() =>
        store.transaction(() => {
          store.setMeta('half', 'written');
          pg.stop(mode);
          store.setMeta('other', 'half');
        }),
      );
      expect(err.reason).toBe('unreachable');
      expect(store.db.inTransaction).toBe(false);
      // While it is down, every use says so at once.
      expect(storeError(() => store.getMeta('before')).reason).toBe('unreachable');
      pg.start();
      expect(once(() => store.getMeta('before'))).toBe('kept');
      expect([store.getMeta('half'), store.getMeta('other')]).toEqual([undefined, undefined]);
      store.transaction(() => store.setMeta('after', 'yes'));
      expect(store.getMeta('after')).toBe('yes');
    },
  );
});

describe('TLS to PostgreSQL', () => {
  let secure: PostgresCluster;
  beforeAll(() => {
    secure = startPostgres({ tls: true });
  });
  afterAll(() => secure.close());

  it.each([
    ['trusting its certificate (ca_file)', () => ({ ca: certificate(), rejectUnauthorized: true }), null],
    [
      "without its CA: the server's certificate refused",
      () => ({ rejectUnauthorized: true }),
      /TLS connection to PostgreSQL failed/,
    ],
    ['reject_unauthorized false: encrypted, unchecked', () => ({ rejectUnauthorized: false }), null],
  ])('%s', (_case, tls, refused) => {
    const url = `${secure.url('postgres')}?sslmode=disable`;
    const attempt = () => open(url, { tls: tls() }, { migrations: [] });
    if (refused) {
      const err = storeError(attempt);
      expect(err.reason).toBe('tls');
      expect(err.message).toMatch(refused);
      return;
    }
    const store = attempt();
    expect(
      store.db.prepare<[], { ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()').get(),
    ).toEqual({
      ssl: true,
    });
  });

  it('TLS asked of a server without it: tls, saying so', () => {
    const err = storeError(() => open(pg.url('postgres'), { tls: { rejectUnauthorized: true } }, { migrations: [] }));
    expect(err.reason).toBe('tls');
    expect(err.message).toMatch(/does not support SSL/);
  });

  function certificate(): string {
    return fs.readFileSync(secure.certificate!, 'utf8');
  }
});
