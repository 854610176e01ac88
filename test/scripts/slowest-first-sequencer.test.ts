/**
 * The suite's file order (vitest.config.ts): the known slowest files start first, even with no
 * durations cached (a fresh clone), and the list names files that exist, so a renamed file is
 * caught here rather than silently started last again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SlowestFirstSequencer } from '../helpers/slowest-first-sequencer.js';

const root = path.resolve(import.meta.dirname, '../..');
const project = { name: '', config: { sequence: { groupOrder: 0 }, isolate: false } };
const spec = (file: string) => ({ moduleId: path.join(root, file), project });

/** A fresh clone's cache: no results, only sizes (vitest then runs the largest first). */
const freshClone = (sizes: Record<string, number>) => ({
  config: { root },
  cache: {
    getFileTestResults: () => undefined,
    getFileStats: (key: string) => ({ size: sizes[key.slice(key.indexOf(':') + 1)] ?? 1 }),
  },
});

describe('the slowest-first sequencer', () => {
  it('starts the known slowest first, slowest of them first, and keeps vitest order for the rest', async () => {
    const files = [
      'test/lib/large.test.ts',
      'test/faults/failover.test.ts',
      'test/lib/small.test.ts',
      'test/faults/database-outage.test.ts',
      'test/lib/medium.test.ts',
    ];
    const ctx = freshClone({ 'test/lib/large.test.ts': 900, 'test/lib/medium.test.ts': 50 });
    const sorted = await new SlowestFirstSequencer(ctx as never).sort(files.map(spec) as never);
    expect(sorted.map((s) => path.relative(root, s.moduleId))).toEqual([
      'test/faults/database-outage.test.ts',
      'test/faults/failover.test.ts',
      'test/lib/large.test.ts',
      'test/lib/medium.test.ts',
      'test/lib/small.test.ts',
    ]);
  });

  it.each(Object.keys(SlowestFirstSequencer.known))('names a file that exists: %s', (file) => {
    expect(fs.existsSync(path.join(root, file))).toBe(true);
  });
});
