/**
 * The compiled entry point as `npx deploy-watchdog` runs it: built by the package's own `build`
 * script (what `npm ci` runs as `prepare`, and the Dockerfile's build stage), then executed through
 * its shebang, which needs the file to be executable (tsc writes it without that bit).
 */
import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'dist', 'cli', 'bin.js');

describe('compiled entry point', () => {
  it('is executable after `npm run build` and starts through its shebang', async () => {
    await run('npm', ['run', '-s', 'build'], { cwd: ROOT });
    expect(statSync(BIN).mode & 0o111).toBe(0o111);
    const { stdout } = await run(BIN, ['--help'], { cwd: ROOT });
    expect(stdout).toContain('usage: deploy-watchdog <command>');
    // The build reads package.json from dist/ as the sources do from src/.
    const version = await run(BIN, ['--version'], { cwd: ROOT });
    expect(version.stdout).toMatch(/^deploy-watchdog \d+\.\d+\.\d+\n$/);
  }, 120_000);
});
