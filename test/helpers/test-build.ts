/**
 * The sources compiled once per vitest run to plain JavaScript, laid out as `npm run build` lays
 * out dist/ (one file per source file, beside the repository's templates and package.json), so the
 * daemons a test spawns and the threads a test starts run as the production build runs.
 *
 * Why not through tsx: its loader costs each process about a second of CPU and each worker thread
 * a loader thread of its own, and the suite starts hundreds of both. esbuild (what tsx itself
 * uses) compiles all of src/ in well under a second; a file whose output did not change is not
 * written again, and one that did is replaced whole (written beside, then renamed), so two runs in
 * one checkout never read half a file.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The repository's root. */
const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Where the build is: a folder at the root, as dist/ is, since the sources find the templates and
 * the simulator's package relative to themselves.
 */
export const TEST_BUILD_DIR = path.join(ROOT, '.test-build');

/** Compiles src/ into {@link TEST_BUILD_DIR}, writing only what changed (in vitest's own process, once per run). */
export function buildSources(): void {
  // Loaded here, not at the top: the test files that only spawn from the build need no compiler.
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const entryPoints = fs
    .readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(ROOT, 'src', f));
  const result = buildSync({
    entryPoints,
    outdir: TEST_BUILD_DIR,
    outbase: path.join(ROOT, 'src'),
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    write: false,
    logLevel: 'silent',
  });
  for (const file of result.outputFiles) {
    const current = fs.existsSync(file.path) ? fs.readFileSync(file.path) : undefined;
    if (current?.equals(file.contents)) continue;
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    const beside = `${file.path}.${process.pid}.tmp`;
    fs.writeFileSync(beside, file.contents);
    fs.renameSync(beside, file.path);
  }
  fs.chmodSync(path.join(TEST_BUILD_DIR, 'cli', 'bin.js'), 0o755);
}

/** The command line of `deploy-watchdog ARGS` from the build: node's options first, then the entry. */
export function binArgs(args: readonly string[], nodeOptions: readonly string[] = []): string[] {
  return [...nodeOptions, path.join(TEST_BUILD_DIR, 'cli', 'bin.js'), ...args];
}
