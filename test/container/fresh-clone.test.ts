/**
 * The server install the README documents, from a fresh clone: `npm ci --omit=dev` installs the
 * production dependencies and builds `dist/` (the `prepare` script, with the compiler a production
 * dependency for that), and what it installed runs: `--version`, and one `check` cycle against the
 * simulator, which loads every runtime dependency (the SQLite addon among them).
 *
 * The clone is of the checkout's committed HEAD, as `git clone` makes it. The packages come from
 * the npm registry (or npm's cache, `--prefer-offline`, as `.ci/run`'s `npm ci` leaves it).
 * better-sqlite3 installs a prebuilt addon that prebuild-install downloads from GitHub; where
 * GitHub is out of reach it compiles one instead, which takes minutes on a small machine. The test
 * hands prebuild-install the addon this checkout built, under the name it would download, so the
 * install takes the path (and roughly the time) it takes on a connected server.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('server install from a fresh clone', () => {
  let work: string;
  let clone: string;
  let sim: RunningSimulator;
  let install: { code: number; output: string };

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'dw-clone-'));
    clone = path.join(work, 'deploy-watchdog');
    await run('git', ['clone', '--quiet', ROOT, clone]);
    const prebuilds = path.join(work, 'prebuilds');
    mkdirSync(prebuilds);
    const sqlite = path.join(ROOT, 'node_modules', 'better-sqlite3');
    const { version } = JSON.parse(readFileSync(path.join(sqlite, 'package.json'), 'utf8')) as { version: string };
    const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
    await run('tar', ['-czf', path.join(prebuilds, name), '-C', sqlite, 'build/Release/better_sqlite3.node']);

    install = await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: clone,
      env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: prebuilds },
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, output: err.stdout + err.stderr }),
    );
    sim = await startSimulator({ apps: 6, seed: 4 });
  }, 180_000);

  afterAll(async () => {
    await sim?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('`npm ci --omit=dev` succeeds and builds an executable dist/cli/bin.js', () => {
    expect(install.code, install.output).toBe(0);
    expect(statSync(path.join(clone, 'dist', 'cli', 'bin.js')).mode & 0o111).toBe(0o111);
  });

  it('installs no development dependency', () => {
    for (const dev of ['vitest', 'tsx', 'eslint', 'playwright-core', 'smtp-server']) {
      expect(existsSync(path.join(clone, 'node_modules', dev)), `${dev} should not be installed`).toBe(false);
    }
  });

  it('runs what it installed: --version, and one check cycle against the simulator', async () => {
    const bin = path.join(clone, 'dist', 'cli', 'bin.js');
    const version = await run(bin, ['--version'], { cwd: clone });
    expect(version.stdout).toMatch(/^deploy-watchdog \d+\.\d+\.\d+\n$/);

    const config = path.join(work, 'config.yaml');
    writeFileSync(
      config,
      [
        'api:',
        `  base_url: ${sim.baseUrl}`,
        '  token: ${DMS_API_TOKEN}',
        '  requests_per_second: off',
        'jobs: { maintenance: "off", jitter: 0s }',
        'notify: { channels: [{ name: console, type: log }] }',
        'log: { level: warn, format: json }',
        '',
      ].join('\n'),
    );
    const checked = await run(bin, ['check', '--config', config], {
      cwd: clone,
      env: { PATH: process.env.PATH, DMS_API_TOKEN: sim.adminToken },
    });
    expect(checked.stdout).toMatch(/\d of \d jobs complete/);
    expect(existsSync(path.join(work, 'deploy-watchdog.db'))).toBe(true);
  }, 60_000);
});
