/** The daemon's memory settings: where they are given, and that node and V8 take them. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyHeapGrowth,
  DAEMON_ENV,
  DAEMON_NODE_OPTIONS,
  HEAP_GROWING_PERCENT,
} from '../../src/cli/memory-settings.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('memory settings', () => {
  it('are the node options of every documented way to start the daemon, and of the soak', () => {
    const entrypoint = read('Dockerfile')
      .split('\n')
      .find((l) => l.startsWith('ENTRYPOINT ['))!;
    const execStart = read('README.md')
      .split('\n')
      .find((l) => l.startsWith('ExecStart='))!;
    const soak = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.soak!;
    for (const option of DAEMON_NODE_OPTIONS) {
      expect(JSON.parse(entrypoint.slice('ENTRYPOINT'.length)) as string[]).toContain(option);
      expect(execStart.split(/\s+/)).toContain(option);
      expect(soak.split(/\s+/)).toContain(option);
    }
    const runtimeEnv = read('Dockerfile')
      .split('\n')
      .find((l) => l.startsWith('ENV ') && l.includes('NODE_ENV=production'))!;
    const unitEnv = read('README.md')
      .split('\n')
      .filter((l) => l.startsWith('Environment='))
      .map((l) => l.slice('Environment='.length));
    for (const [name, value] of Object.entries(DAEMON_ENV)) {
      expect(runtimeEnv.split(/\s+/)).toContain(`${name}=${value}`);
      expect(unitEnv).toContain(`${name}=${value}`);
      expect(soak.split(/\s+/)).toContain(`${name}=${value}`);
    }
  });

  it('are accepted by this node, and name the growth themselves, so the process leaves it as started', () => {
    const script = `import('${path.join(ROOT, 'src/cli/memory-settings.ts')}').then((m) => console.log(m.applyHeapGrowth()))`;
    const ok = spawnSync(process.execPath, [...DAEMON_NODE_OPTIONS, '--import', 'tsx', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(ok.stderr).toBe('');
    expect(DAEMON_NODE_OPTIONS).toContain(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(ok.stdout.trim()).toBe('null');
  });

  it("leave V8's old-generation growth alone when node was started with its own", () => {
    expect(applyHeapGrowth(['--heap-growing-percent=200'])).toBeNull();
    expect(applyHeapGrowth(['--max-semi-space-size=4'])).toBe(HEAP_GROWING_PERCENT);
  });
});
