/** Why the state database could not be used; one word a caller (or a test) can switch on. */
export type StoreErrorCause =
  | 'missing' // the file does not exist and the caller only reads an existing state
  | 'directory' // the parent directory is missing and could not be created
  | 'unwritable' // the file cannot be created or written (permissions, read-only file system)
  | 'disk-full' // SQLITE_FULL or ENOSPC
  | 'not-a-database' // SQLITE_NOTADB: the file is something else
  | 'corrupt' // SQLITE_CORRUPT
  | 'locked' // SQLITE_BUSY / SQLITE_LOCKED after the busy timeout
  | 'newer-schema' // the file was migrated by a newer deploy-watchdog
  | 'migration' // a migration failed (its transaction was rolled back)
  | 'io'; // any other I/O failure

/**
 * The state database at `path` could not be opened, migrated or written. The message names the
 * path and the cause in words an operator can act on; `cause` keeps the original error.
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
