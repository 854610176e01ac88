/**
 * The state backends the store tests run against, for `describe.each(STATE_BACKENDS)`: SQLite (a
 * file in a temp directory) and PostgreSQL (a database of its own on the test run's shared server,
 * dropped after the test file). No vitest import here: a test's child process (a crash fixture)
 * loads the fixtures too. PostgreSQL must be installed, as chromium must: `.ci/run` installs both,
 * and a test without it fails saying so.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { Secret } from '../../src/lib/secret.js';
import type { StateConfig } from '../../src/config/load-config.js';
import { openState } from '../../src/state/open-state.js';
import type { SqlEngine } from '../../src/state/sql-database.js';
import { sqlDialect } from '../../src/state/sql-dialect.js';
import { SqliteDatabase } from '../../src/state/sqlite-database.js';
import type { Store, StoreOptions } from '../../src/state/store.js';
import { closeAfterFile } from './after-file.js';
import { sharedPostgres, type PostgresCluster } from './postgres.js';

/** A new, empty state on one backend. */
export interface TestState {
  /** The config's `state` section naming it (its defaults filled). */
  config: StateConfig;
  /** The `state:` section of a config file naming it. */
  yaml: string;
  /** Opens a store on it as the daemon does (`openState`); `cleanup` closes it. */
  open(options?: StoreOptions): Store;
  /** Closes every store opened by `open` and removes the state. */
  cleanup(): void;
}

/** One backend. */
export interface StateBackend {
  /** For test names: `SQLite`, `PostgreSQL`. */
  name: string;
  engine: SqlEngine;
  /**
   * A new, empty state. On SQLite the file `state.db` in `dir` (a new temp directory when not
   * given; removed at cleanup only then); on PostgreSQL a new database, dropped at cleanup.
   */
  fresh(dir?: string): TestState;
}

const TIMEOUTS = {
  retention: 30 * 86_400_000,
  connect_timeout: 10_000,
  statement_timeout: 30_000,
  leader: { lease: 10_000 },
};

/** Keeps the stores a state opened, to close them all at cleanup. */
function testState(config: StateConfig, yaml: string, remove: () => void): TestState {
  const opened: Store[] = [];
  return {
    config,
    yaml,
    open(options) {
      const store = openState(config, options);
      opened.push(store);
      return store;
    },
    cleanup() {
      for (const s of opened.splice(0)) s.close();
      remove();
    },
  };
}

const sqlite: StateBackend = {
  name: 'SQLite',
  engine: 'sqlite',
  fresh(given) {
    const dir = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'dw-state-'));
    const file = path.join(dir, 'state.db');
    return testState({ ...TIMEOUTS, path: file }, `state: { path: ${JSON.stringify(file)} }`, () => {
      if (!given) fs.rmSync(dir, { recursive: true, force: true });
    });
  },
};

let cluster: PostgresCluster | undefined;

/** The test run's PostgreSQL server (test/helpers/postgres.ts `sharedPostgres`); this file's databases are dropped after it. */
export function testCluster(): PostgresCluster {
  if (!cluster) {
    const joined = sharedPostgres();
    cluster = joined;
    closeAfterFile(() => {
      joined.close();
      cluster = undefined;
    });
  }
  return cluster;
}

/**
 * Whether a store opened with `options` would be no different on a copy of the migrated template:
 * all the migrations, applied with nobody watching (no logger or clock of the test's), and the
 * database allowed to be new (not `mustExist`).
 */
function templateWillDo(options: StoreOptions | undefined): boolean {
  return !options || (!options.migrations && !options.logger && !options.clock && !options.mustExist);
}

const postgres: StateBackend = {
  name: 'PostgreSQL',
  engine: 'postgres',
  fresh() {
    const server = testCluster();
    // Made on first need: when the first thing asked of the state is a store opened as the daemon
    // would, a copy of the migrated template (migrating takes most of a second); otherwise (its
    // config given to a command or daemon, a test's own migrations) an empty database, as before.
    let made: { database: string; state: TestState; fromTemplate: boolean } | undefined;
    const make = (fromTemplate: boolean) => {
      if (made) return made;
      const database = server.createDatabase({ migrated: fromTemplate });
      const url = server.url(database);
      const state = testState({ ...TIMEOUTS, url: new Secret(url) }, `state: { url: ${JSON.stringify(url)} }`, () =>
        server.dropDatabase(database),
      );
      made = { database, state, fromTemplate };
      return made;
    };
    let redrawn = false;
    return {
      get config() {
        return make(false).state.config;
      },
      get yaml() {
        return make(false).state.yaml;
      },
      open(options) {
        const { state, fromTemplate } = make(templateWillDo(options));
        const store = state.open(options);
        if (fromTemplate && !redrawn) {
          // What a migration draws at random is drawn again: two copies are two installations.
          store.db.exec(
            `UPDATE meta SET value = ${sqlDialect('postgres').randomHex(10)} WHERE key = 'installation_id'`,
          );
          redrawn = true;
        }
        return store;
      },
      cleanup() {
        made?.state.cleanup();
      },
    };
  },
};

/** Both backends, SQLite first. */
export const STATE_BACKENDS: readonly StateBackend[] = [sqlite, postgres];

/** SQLite alone: the backend of the tests that are about something else. */
export const SQLITE_BACKEND: StateBackend = sqlite;

/** The better-sqlite3 connection of a SQLite store, for what only SQLite has (pragmas); throws for another engine. */
export function sqliteHandle(store: Store): Database.Database {
  if (!(store.db instanceof SqliteDatabase)) throw new Error(`not a SQLite store: ${store.db.engine}`);
  return store.db.handle;
}
