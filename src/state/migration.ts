/**
 * One step of the database schema. Each migration lives in `migrations/NNN-name.ts` as the
 * file's default export and is listed once in `migrations/index.ts`.
 */
export interface Migration {
  /** Strictly increasing; the number in the file name. Never reuse or renumber a shipped one. */
  version: number;
  /** Short name for logs and the `schema_migrations` table. */
  name: string;
  /** SQL run in one transaction together with its `schema_migrations` row. */
  up: string;
}
