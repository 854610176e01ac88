import { describe, expect, it } from 'vitest';
import { restorePointSchema, type RestorePoint } from '../../src/api/schemas.js';
import { restorePointFacts } from '../../src/context/restore-point-facts.js';

const point = (over: Partial<RestorePoint> = {}): RestorePoint =>
  restorePointSchema.parse({
    id: 12,
    app_id: 3,
    at: '2026-11-01T11:50:00Z',
    action: 'update',
    outcome: 'kept',
    run_id: 5981,
    commits: [{ repository: 'shop', before: 'aaa', after: 'bbb' }],
    modules: [],
    backup_id: null,
    backup: null,
    backup_verified: false,
    rollback_of_id: null,
    held: false,
    instant_undo: false,
    kept_until: null,
    ...over,
  });

describe('restorePointFacts', () => {
  it.each<[string, Partial<RestorePoint>, [string, string][]]>([
    [
      'kept: the app as before, no backup taken first',
      {},
      [
        ['Restore point', '#12 kept: the change failed and the app was left as before'],
        ['Instant undo', 'not possible'],
        ['Backup first', 'none'],
      ],
    ],
    [
      'failed part-way, with a verified backup taken first',
      { outcome: 'failed', backup_id: 77, backup: 'shop-20261101-1150.zip', backup_verified: true },
      [
        ['Restore point', '#12 failed: the change failed part-way: the app may be half-updated'],
        ['Instant undo', 'not possible'],
        ['Backup first', 'shop-20261101-1150.zip (#77), verified'],
      ],
    ],
    [
      'applied, undone at once until a time; a backup not verified, named by id only',
      { outcome: 'applied', instant_undo: true, kept_until: '2026-11-08T11:50:00Z', backup_id: 78 },
      [
        ['Restore point', '#12 applied: the change was applied'],
        ['Instant undo', 'possible'],
        ['Undo possible until', '2026-11-08T11:50:00Z'],
        ['Backup first', '#78, not verified'],
      ],
    ],
    [
      'held: rolled back to it, automatic updates wait',
      { outcome: 'applied', held: true },
      [
        ['Restore point', '#12 applied: the change was applied'],
        ['Instant undo', 'not possible'],
        ['Backup first', 'none'],
        ['Held', 'rolled back to this point: automatic updates wait'],
      ],
    ],
  ])('%s', (_what, over, facts) => {
    expect(restorePointFacts(point(over)).map((f) => [f.label, f.value])).toEqual(facts);
  });

  it('marks the undo deadline as a time, for each medium to show its own way', () => {
    const facts = restorePointFacts(point({ instant_undo: true, kept_until: '2026-11-08T11:50:00Z' }));
    expect(facts.find((f) => f.label === 'Undo possible until')?.kind).toBe('time');
  });
});
