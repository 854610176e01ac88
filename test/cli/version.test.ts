/** `deploy-watchdog --version`: the version of package.json, the one place it is written. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

describe('deploy-watchdog --version', () => {
  it.each([['--version'], ['-V']])('%s prints the version of package.json and exits 0', async (flag) => {
    expect(await runCli([flag])).toEqual({ code: 0, stdout: `deploy-watchdog ${version}\n`, stderr: '' });
  });

  it('is named in the help', async () => {
    expect((await runCli(['--help'])).stdout).toContain('deploy-watchdog --version');
  });
});
