/**
 * The checks `npm test` runs before the tests, at once (scripts/static-checks.mjs): run here with
 * small commands of their own through the script's `runChecks`, in a Node process of its own as
 * `npm test` runs it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPT = path.resolve('scripts/static-checks.mjs');

/** Runs `checks` (name, JavaScript for `node -e`) through `runChecks`; what it printed, and the names it answered. */
function run(checks: [string, string][]): { printed: string; failed: string[] } {
  const program = `
    import { runChecks } from ${JSON.stringify(SCRIPT)};
    let printed = '';
    const failed = await runChecks(JSON.parse(process.argv[1]), { out: { write: (s) => (printed += s) } });
    process.stdout.write(JSON.stringify({ printed, failed }));
  `;
  const argv = checks.map(([name, js]) => ({ name, argv: [process.execPath, '-e', js] }));
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', program, JSON.stringify(argv)], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { printed: string; failed: string[] };
}

describe('runChecks', () => {
  it('answers no failure when every check passes, and prints each one whole, after its own heading', () => {
    const { printed, failed } = run([
      ['pausing', "console.log('line 1'); setTimeout(() => console.log('line 2'), 300)"],
      ['quick', "console.log('quick line')"],
    ]);
    expect(failed).toEqual([]);
    // Whichever ends first: the pausing one's two lines stay together, below its heading.
    expect(printed).toMatch(
      /^> .*: passed in \d+\.\d s\n(line 1\nline 2|quick line)\n> .*: passed in \d+\.\d s\n(line 1\nline 2|quick line)\n$/,
    );
    expect(printed).toContain('line 1\nline 2\n');
    expect(printed).toContain('quick line\n');
  });

  it.each([
    ['an exit code', "console.error('3 problems'); process.exit(2)", /failed \(exit 2\) in \d+\.\d s\n3 problems\n/],
    ['a signal', "process.kill(process.pid, 'SIGKILL')", /failed \(SIGKILL\)/],
  ])('names a check that fails with %s, and still runs and prints the others', (_how, js, said) => {
    const { printed, failed } = run([
      ['passes', "console.log('all good')"],
      ['breaks', js],
    ]);
    expect(failed).toEqual(['breaks']);
    expect(printed).toMatch(said);
    expect(printed).toContain('all good\n');
  });

  it('names a check whose program is not there', () => {
    const program = `
      import { runChecks } from ${JSON.stringify(SCRIPT)};
      const failed = await runChecks([{ name: 'ghost', argv: ['no-such-program-dw'] }], { out: { write: () => true } });
      process.stdout.write(JSON.stringify(failed));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
    expect(JSON.parse(r.stdout)).toEqual(['ghost']);
  });
});
