import { describe, expect, it } from 'vitest';
import { cutLine, logExcerpt, logSince, logSourceOf } from '../../src/context/log-excerpt.js';
import { contextConfigSchema } from '../../src/config/context-config.js';

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);
const at = (msAgo: number) => new Date(NOW - msAgo).toISOString();
const DEFAULTS = contextConfigSchema.parse(undefined).logs;

describe('logSourceOf', () => {
  it.each([
    ['an update (by its action)', 'app_update', 'update', 'setup'],
    ['a deploy', 'app_deploy', 'deploy', 'setup'],
    ['a module update', 'app_update_modules', 'update_modules', 'setup'],
    ['a backup', 'app_backup', 'backup', 'backup'],
    ['an upgrade', 'app_upgrade', 'upgrade', 'upgrade'],
    ['a restore', 'app_restore', 'restore', 'restore'],
    ['a restart: the application log', 'app_restart', 'restart', 'main'],
    ['an action no one named', 'odd_flow', 'odd', 'main'],
  ])('%s → %s', (_what, workflow, action, source) => {
    expect(logSourceOf({ workflow, action }, DEFAULTS.sources)).toBe(source);
  });

  it("takes the workflow's word before the action's", () => {
    expect(logSourceOf({ workflow: 'odoo_update', action: 'update' }, { odoo_update: 'script', update: 'setup' })).toBe(
      'script',
    );
  });
});

describe('logSince', () => {
  it.each<[string, number | null, number, string | undefined]>([
    ['a failure just now, no lead: the shortest look-back', NOW, 0, '30s'],
    ['a failure 1m 10s ago with a 5m lead: whole minutes, up', NOW - 70_000, 5 * MINUTE, '7m'],
    ['exactly an hour back: said in hours', NOW - 55 * MINUTE, 5 * MINUTE, '1h'],
    ['90 minutes back', NOW - 85 * MINUTE, 5 * MINUTE, '90m'],
    ['two days ago: the longest look-back the reference allows', NOW - 48 * 60 * MINUTE, 5 * MINUTE, '24h'],
    ['a failure time in the future (clock skew): the lead alone', NOW + MINUTE, 0, '30s'],
    ['no failure time: the service default', null, 5 * MINUTE, undefined],
  ])('%s → %s', (_what, failedAt, lead, since) => {
    expect(logSince(failedAt, NOW, lead)).toBe(since);
  });
});

describe('cutLine', () => {
  it.each([
    ['a short line, as it is', 'setup: pulling image', 40, 'setup: pulling image'],
    ['control characters folded, trailing space dropped', 'a\r\nb\tc\u001b[31m  \n', 40, 'a b c [31m'],
    ['cut with an ellipsis at the width', 'x'.repeat(50), 10, `${'x'.repeat(9)}…`],
    ['an emoji is kept or dropped whole', `${'a'.repeat(8)}😀😀`, 10, `${'a'.repeat(8)}😀😀`],
    ['an emoji at the cut is dropped whole', `${'a'.repeat(9)}😀😀`, 10, `${'a'.repeat(9)}…`],
  ])('%s', (_what, line, width, expected) => {
    expect(cutLine(line, width)).toBe(expected);
  });
});

describe('logExcerpt', () => {
  const item = (msAgo: number, line: string) => ({ time: at(msAgo), line, source: 'setup' });
  const options = { failedAt: NOW - 2 * MINUTE, lines: 3, width: 160, error_words: DEFAULTS.error_words };

  it('shows error lines first, then the newest others, up to the failure', () => {
    const items = [
      item(6 * MINUTE, 'setup: pulling image'),
      item(5 * MINUTE, 'setup: installing requirements'),
      item(4 * MINUTE, 'setup: ERROR pip install failed'),
      item(3 * MINUTE, 'setup: retrying'),
      item(2 * MINUTE, 'Traceback (most recent call last):'),
      // After the failure (past the minute the log may lag): not about it.
      item(0, 'setup: ERROR something later'),
    ];
    const excerpt = logExcerpt(items, options);
    expect(excerpt.matched).toBe(5);
    expect(excerpt.lines.map((l) => [l.line, l.error])).toEqual([
      ['setup: ERROR pip install failed', true],
      ['Traceback (most recent call last):', true],
      ['setup: retrying', false],
    ]);
  });

  it.each([
    ['a word inside another is not an error word', 'setup: errors=0 terrorist', false],
    ['any case', 'FATAL: database gone', true],
    ['a word beside punctuation', 'step check: failed.', true],
  ])('%s', (_what, line, error) => {
    expect(logExcerpt([item(3 * MINUTE, line)], options).lines[0]?.error).toBe(error);
  });

  it('keeps the newest error lines when there are more than it shows', () => {
    const items = [1, 2, 3, 4, 5].map((n) => item((10 - n) * MINUTE, `ERROR ${n}`));
    expect(logExcerpt(items, options).lines.map((l) => l.line)).toEqual(['ERROR 3', 'ERROR 4', 'ERROR 5']);
  });

  it('keeps lines whose time it cannot read, and every line when the failure time is unknown', () => {
    const items = [{ time: null, line: 'no time', source: 'main' }, item(-5 * MINUTE, 'a later line')];
    expect(logExcerpt(items, options).lines.map((l) => l.line)).toEqual(['no time']);
    expect(logExcerpt(items, { ...options, failedAt: null }).lines.map((l) => l.line)).toEqual([
      'no time',
      'a later line',
    ]);
  });

  it('cuts each line to the width and says nothing when no line is around the failure', () => {
    expect(logExcerpt([item(3 * MINUTE, 'y'.repeat(300))], { ...options, width: 40 }).lines[0]?.line).toHaveLength(40);
    expect(logExcerpt([item(-10 * MINUTE, 'later')], options)).toEqual({ lines: [], matched: 0 });
  });
});
