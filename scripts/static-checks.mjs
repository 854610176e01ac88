#!/usr/bin/env node
// The checks `npm test` runs before the tests: the type check, ESLint and Prettier, at the same
// time. Each is one thread, and on a fresh clone (no caches) they take about 30, 20 and 25 s: run
// one after another they cost a 2-core machine the sum, run together about half of it. Each
// check's output is printed whole when it ends (not interleaved); the exit code is 1 when any
// check failed, and the failed ones are named last.
//
//   node scripts/static-checks.mjs
import { spawn } from 'node:child_process';
import path from 'node:path';

/** The checks of `npm test`: a name, and the command line (run from the repository's root). */
export const CHECKS = [
  { name: 'tsc', argv: ['tsc', '-p', 'tsconfig.json', '--noEmit'] },
  { name: 'eslint', argv: ['eslint', '.', '--max-warnings', '0'] },
  { name: 'prettier', argv: ['prettier', '--check', '.'] },
];

/**
 * Runs `checks` at once in `cwd` (each `argv[0]` found in `node_modules/.bin` or on PATH), writes
 * each one's output to `out` as it ends, and answers the names of those that failed.
 */
export async function runChecks(checks, { cwd = process.cwd(), out = process.stdout } = {}) {
  const bin = path.join(cwd, 'node_modules', '.bin');
  const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
  const results = await Promise.all(
    checks.map(
      (check) =>
        new Promise((resolve) => {
          const started = Date.now();
          let output = '';
          let ended = false;
          const child = spawn(check.argv[0], check.argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
          child.stdout.on('data', (d) => (output += d));
          child.stderr.on('data', (d) => (output += d));
          const done = (ok, why) => {
            if (ended) return;
            ended = true;
            const seconds = ((Date.now() - started) / 1000).toFixed(1);
            out.write(`> ${check.argv.join(' ')}: ${ok ? 'passed' : `failed (${why})`} in ${seconds} s\n${output}`);
            if (output && !output.endsWith('\n')) out.write('\n');
            resolve({ name: check.name, ok });
          };
          child.on('error', (err) => done(false, err.message));
          child.on('close', (code, signal) => done(code === 0, signal ?? `exit ${code}`));
        }),
    ),
  );
  return results.filter((r) => !r.ok).map((r) => r.name);
}

/** Runs {@link CHECKS} from the repository's root; 1 when any failed. */
async function main() {
  const failed = await runChecks(CHECKS, { cwd: path.resolve(import.meta.dirname, '..') });
  if (failed.length > 0) process.stdout.write(`static checks failed: ${failed.join(', ')}\n`);
  return failed.length > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main();
