/** The state backends the store tests run against, and what only one of them has. */
import type Database from 'better-sqlite3';
import { SqliteDatabase } from '../../src/state/sqlite-database.js';
import type { Store } from '../../src/state/store.js';

/** The better-sqlite3 connection of a SQLite store, for what only SQLite has (pragmas); throws for another engine. */
export function sqliteHandle(store: Store): Database.Database {
  if (!(store.db instanceof SqliteDatabase)) throw new Error(`not a SQLite store: ${store.db.engine}`);
  return store.db.handle;
}
