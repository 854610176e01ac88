/**
 * A command whose reader goes away early, as in `deploy-watchdog schema | head -c 100`: the rest of
 * its output is dropped, and it ends with its own status, without node's stack for the EPIPE.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { binArgs } from '../helpers/test-build.js';

const run = promisify(execFile);

describe('standard output closed by its reader', () => {
  it('ends the command quietly with its own exit status', async () => {
    // A real pipe to a reader that stops after 100 bytes: `schema` prints ~190 kB, more than a
    // pipe holds, so its writes outlive the reader. bash reports the command's own status.
    const pipeline = '"$0" "$@" | head -c 100 > /dev/null; echo "status=${PIPESTATUS[0]}"';
    const { stdout, stderr } = await run('bash', ['-c', pipeline, process.execPath, ...binArgs(['schema'])]);
    expect(stderr).toBe('');
    expect(stdout).toBe('status=0\n');
  }, 60_000);
});
