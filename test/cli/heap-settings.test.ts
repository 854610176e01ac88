/** The daemon's heap settings: where they are given, and that node and V8 take them. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyHeapGrowth, DAEMON_NODE_OPTIONS, HEAP_GROWING_PERCENT } from '../../src/cli/heap-settings.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('heap settings', () => {
  it('are the node options of every documented way to start the daemon, and of the soak', () => {
    const entrypoint = read('Dockerfile').split('\n').find((l) => l.startsWith('ENTRYPOINT ['))!;
    const execStart = read('README.md').split('\n').find((l) => l.startsWith('ExecStart='))!;
    const soak = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.soak!;
    for (const option of DAEMON_NODE_OPTIONS) {
      expect(JSON.parse(entrypoint.slice('ENTRYPOINT'.length)) as string[]).toContain(option);
      expect(execStart.split(/\s+/)).toContain(option);
      expect(soak.split(/\s+/)).toContain(option);
    }
  });

  it('are accepted by this node, and the growth can be set once the process runs', () => {
    const script = `import('${path.join(ROOT, 'src/cli/heap-settings.ts')}').then((m) => console.log(m.applyHeapGrowth()))`;
    const ok = spawnSync(process.execPath, [...DAEMON_NODE_OPTIONS, '--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(ok.stderr).toBe('');
    expect(ok.stdout.trim()).toBe(String(HEAP_GROWING_PERCENT));
  });

  it("leave V8's old-generation growth alone when node was started with its own", () => {
    expect(applyHeapGrowth(['--heap-growing-percent=200'])).toBeNull();
    expect(applyHeapGrowth(['--max-semi-space-size=4'])).toBe(HEAP_GROWING_PERCENT);
  });
});
