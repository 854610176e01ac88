/** Why the state database could not be used; one word a caller (or a test) can switch on. */
export type StoreErrorCause =
  | 'missing' // the file (or PostgreSQL database, or its tables) does not exist and the caller only reads an existing state
  | 'directory' // the parent directory is missing and could not be created
  | 'unwritable' // the file cannot be created or written (permissions, read-only file system, a PostgreSQL standby)
  | 'disk-full' // SQLITE_FULL, ENOSPC, PostgreSQL's disk_full
  | 'not-a-database' // SQLITE_NOTADB: the file is something else
  | 'corrupt' // SQLITE_CORRUPT, PostgreSQL's data_corrupted
  | 'locked' // SQLITE_BUSY / SQLITE_LOCKED after the busy timeout; PostgreSQL's lock_timeout
  | 'newer-schema' // the file was migrated by a newer deploy-watchdog
  | 'older-schema' // the file was written by an older deploy-watchdog and the caller does not migrate
  | 'migration' // a migration failed (its transaction was rolled back)
  | 'unreachable' // PostgreSQL cannot be reached, or the connection was lost (nothing of an open transaction was written)
  | 'refused' // PostgreSQL refused the login or the access (password, permissions, too many connections)
  | 'tls' // the TLS connection to PostgreSQL failed (certificate not trusted, the server has no TLS)
  | 'timeout' // PostgreSQL did not finish a statement within state.statement_timeout
  | 'io'; // any other I/O failure

/**
 * The state database at `path` (a file, or a PostgreSQL URL without its password) could not be
 * opened, migrated or written. The message names the path and the cause in words an operator can act on; `cause` keeps the original error.
 */
export class StoreError extends Error {
  override name = 'StoreError';

  constructor(
    readonly path: string,
    readonly reason: StoreErrorCause,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`state database ${path}: ${message}`, options);
  }
}
