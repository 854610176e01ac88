/**
 * SQL lives only in stores (issue 26): a file of `src/` that writes a statement is a store
 * (`*-store.ts`, beside the stage it keeps the rows of) or is the state itself (`src/state/`:
 * the engines, migrations, retention, the leases, the copy between engines). A stage that wants
 * rows asks its store; a newcomer looking for where a table is read finds it in one file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** The shapes of a statement: a read, the three writes, a table made. */
const STATEMENT = /\b(SELECT\s[^'`;]*?\bFROM\s|INSERT\s+INTO\s|DELETE\s+FROM\s|UPDATE\s+\w+\s+SET\s|CREATE\s+TABLE\s)/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Where SQL may stand. */
function mayHoldSql(relative: string): boolean {
  return relative.startsWith('state/') || relative.endsWith('-store.ts');
}

describe('SQL in src/', () => {
  const withSql = sourceFiles(SRC)
    .filter((f) => STATEMENT.test(fs.readFileSync(f, 'utf8')))
    .map((f) => path.relative(SRC, f));

  it('stands only in stores and in the state itself', () => {
    expect(withSql.filter((f) => !mayHoldSql(f))).toEqual([]);
  });

  it('is found where it is (the check itself): in the alert store and the migrations', () => {
    expect(withSql).toContain('alerts/alert-store.ts');
    expect(withSql).toContain('state/migrations/002-alerts.ts');
    expect(STATEMENT.test('db.prepare(`SELECT id FROM alerts WHERE fingerprint = ?`)')).toBe(true);
    expect(STATEMENT.test('the update of an app sets its state')).toBe(false);
  });
});
