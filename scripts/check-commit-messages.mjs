#!/usr/bin/env node
// Checks commit messages against the project's rule (docs/architecture.md, "History"): a subject
// of at most 72 characters, in the imperative, without a final period, and a blank line before
// any body. Plain Node with no dependencies, so CI can run it before `npm ci` and a commit-msg
// hook (.githooks/commit-msg) can run it on a message being written.
//
//   node scripts/check-commit-messages.mjs            every commit since .commit-msg-baseline
//   node scripts/check-commit-messages.mjs REV..REV   the commits of a range
//   node scripts/check-commit-messages.mjs --file F   one message (the commit-msg hook)
//
// Commits before the baseline were written under no rule; they are history, left as they are.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The longest subject `git log --oneline` shows whole in an 80-column terminal. */
export const MAX_SUBJECT = 72;

/**
 * First words that say what a commit did or does instead of telling the code what to do: the
 * past tense and the third person of the verbs most often written so. A subject starts with the
 * bare verb ("Add", "Fix"), as git's own "Merge" and "Revert" do.
 */
const NOT_IMPERATIVE = new Set(
  [
    'added adds adding',
    'fixed fixes fixing',
    'changed changes changing',
    'updated updates updating',
    'removed removes removing',
    'made makes making',
    'moved moves moving',
    'renamed renames renaming',
    'improved improves improving',
    'refactored refactors refactoring',
    'implemented implements implementing',
    'created creates creating',
    'deleted deletes deleting',
    'merged',
  ]
    .join(' ')
    .split(' '),
);

/** What is wrong with one commit message, as sentences; empty when nothing is. */
export function messageProblems(message) {
  const lines = message
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n')
    .trimEnd()
    .split('\n');
  const subject = lines[0] ?? '';
  const problems = [];
  if (subject.trim() === '') return ['the subject is empty'];
  if (subject.length > MAX_SUBJECT)
    problems.push(`the subject has ${subject.length} characters, more than ${MAX_SUBJECT}: put the rest in the body`);
  if (/\.\s*$/.test(subject)) problems.push('the subject ends with a period');
  if (!/^[A-Z]/.test(subject))
    problems.push('the subject does not start with a capital letter (the verb, as in "Add …")');
  const first = subject.split(/[\s:]/)[0].toLowerCase();
  if (NOT_IMPERATIVE.has(first))
    problems.push(`"${subject.split(/\s/)[0]}" is not the imperative: write what the commit does, as in "Add …"`);
  if (lines.length > 1 && lines[1].trim() !== '') problems.push('the line after the subject is not blank');
  return problems;
}

function git(args, cwd) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The commits to check: a range given, or everything since the baseline the repository records. */
function commitsToCheck(arg, root) {
  let range = arg;
  if (!range) {
    const baseline = fs.readFileSync(path.join(root, '.commit-msg-baseline'), 'utf8').trim();
    try {
      git(['cat-file', '-e', `${baseline}^{commit}`], root);
    } catch {
      // A shallow clone without the baseline: check what it has.
      process.stderr.write(
        `check-commit-messages: the baseline ${baseline} is not in this clone; checking HEAD alone\n`,
      );
      return [git(['rev-parse', 'HEAD'], root).trim()];
    }
    range = `${baseline}..HEAD`;
  }
  return git(['rev-list', '--reverse', range], root).split('\n').filter(Boolean);
}

function main(argv) {
  if (argv[0] === '--file') {
    const problems = messageProblems(fs.readFileSync(argv[1], 'utf8'));
    for (const p of problems) process.stderr.write(`commit message: ${p}\n`);
    return problems.length === 0 ? 0 : 1;
  }
  const root = git(['rev-parse', '--show-toplevel'], process.cwd()).trim();
  let bad = 0;
  const commits = commitsToCheck(argv[0], root);
  for (const sha of commits) {
    const problems = messageProblems(git(['log', '-1', '--format=%B', sha], root));
    if (problems.length === 0) continue;
    bad++;
    const subject = git(['log', '-1', '--format=%s', sha], root).trim();
    process.stderr.write(`${sha.slice(0, 10)} ${subject.slice(0, 60)}${subject.length > 60 ? '…' : ''}\n`);
    for (const p of problems) process.stderr.write(`  - ${p}\n`);
  }
  process.stdout.write(`commit messages: ${commits.length - bad} of ${commits.length} follow the rule\n`);
  return bad === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
