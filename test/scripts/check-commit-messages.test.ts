/**
 * The commit-message rule (scripts/check-commit-messages.mjs), run as CI and the commit-msg hook
 * run it: as a program, over the commits of a real git repository made in a temp folder.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve('scripts/check-commit-messages.mjs');

function check(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { cwd, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('one message (the commit-msg hook)', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'commit-msg-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['Follow a retried run to its outcome', null],
    ['Follow a retried run to its outcome\n\nThe why, in the body.\n', null],
    ["Merge branch 'run-lineage'", null],
    ['Fix the ceiling\n# a comment git strips\n', null],
    ['x'.repeat(73), /73 characters, more than 72/],
    ['Add a thing.', /ends with a period/],
    ['notifier: one helper for both', /capital letter/],
    ['Added the budget', /"Added" is not the imperative/],
    ['Fixes: the loop', /"Fixes:" is not the imperative/],
    ['Add a thing\nwith a body glued on', /line after the subject is not blank/],
    ['', /subject is empty/],
  ])('%j', (message, problem) => {
    const file = path.join(dir, 'MSG');
    fs.writeFileSync(file, message);
    const r = check(['--file', file], dir);
    if (problem === null) {
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
    } else {
      expect(r.err).toMatch(problem);
      expect(r.code).toBe(1);
    }
  });
});

describe('the commits since the baseline (CI)', () => {
  let repo: string;
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: repo,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    }).trim();
  const commit = (message: string) => git('commit', '--allow-empty', '-q', '-m', message);

  beforeAll(() => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'commit-log-'));
    git('init', '-q');
    commit('an old subject written under no rule, and much longer than seventy-two characters.');
    fs.writeFileSync(path.join(repo, '.commit-msg-baseline'), `${git('rev-parse', 'HEAD')}\n`);
    commit('Add the baseline file');
  });
  afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('passes when every commit after the baseline follows the rule; history before it is left alone', () => {
    const r = check([], repo);
    expect(r.out).toContain('commit messages: 1 of 1 follow the rule');
    expect(r.code).toBe(0);
  });

  it('fails naming the commit and what is wrong with it', () => {
    commit('updated things.');
    const r = check([], repo);
    expect(r.code).toBe(1);
    expect(r.out).toContain('1 of 2 follow the rule');
    expect(r.err).toMatch(/^[0-9a-f]{10} updated things\.$/m);
    expect(r.err).toContain('ends with a period');
    expect(r.err).toContain('capital letter');
  });

  it('checks a range given instead', () => {
    const r = check(['HEAD~1..HEAD~1'], repo);
    expect(r.out).toContain('0 of 0 follow the rule');
    expect(r.code).toBe(0);
  });
});
