import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  commandLine,
  MAX_COMMAND_LINE,
  shellLine,
  shellWord,
  type UnshowableReason,
} from '../../../src/notify/channels/shell-line.js';

/**
 * The words a POSIX shell makes of `line`, as `printf '%s\0'` prints them. Standard input is not a
 * socket, so bash reads no rc file (it does for a socket, taking it for a remote shell).
 */
function wordsOf(shell: 'bash' | 'dash', line: string): string[] {
  const result = spawnSync(shell, ['-c', `printf '%s\\0' ${line}`], {
    env: { PATH: '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  return result.stdout.split('\0').slice(0, -1);
}

/** Every printable ASCII character alone, then words that mix them the way hostile names do. */
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
const WORDS = [
  ...PRINTABLE,
  '',
  "'",
  "''",
  "it's",
  "'\\''",
  'a\\',
  "$'x'",
  '$(id)',
  '`id`',
  '!!',
  '~root',
  '=ls',
  '*',
  '{a,b}',
  'a  b',
  ' lead',
  'café 日本 🚀',
  '--match',
  'app=shop',
];

describe('shellWord', () => {
  it.each<[string, string]>([
    ['check=failed_runs', 'check=failed_runs'],
    ['/etc/deploy-watchdog/config.yaml', '/etc/deploy-watchdog/config.yaml'],
    ['-rf', '-rf'],
    ['a,b:c@d+e', 'a,b:c@d+e'],
    ['', "''"],
    ['a b', "'a b'"],
    ["Bob's", "'Bob'\\''s'"],
    ['…', "'…'"],
    ['=ls', "'=ls'"],
    ['~', "'~'"],
    ['%1', "'%1'"],
    ['a*', "'a*'"],
    ['$x', "'$x'"],
    ['!', "'!'"],
  ])('%j → %s', (word, quoted) => {
    expect(shellWord(word)).toBe(quoted);
  });

  it.each(['bash', 'dash'] as const)('%s reads back every word exactly, alone and together', (shell) => {
    expect(wordsOf(shell, shellLine(WORDS))).toEqual(WORDS);
  });
});

describe('commandLine', () => {
  const base = ['deploy-watchdog', 'silence', '--match'];

  it('answers the shell line of words it can show', () => {
    expect(commandLine([...base, 'app=shop', '--reason', '…'])).toEqual({
      line: "deploy-watchdog silence --match app=shop --reason '…'",
    });
  });

  it.each<[string, string, UnshowableReason]>([
    ['a newline', 'app=a\nb', 'control'],
    ['a carriage return', 'app=a\rb', 'control'],
    ['a tab', 'app=a\tb', 'control'],
    ['NUL', 'app=a\u0000', 'control'],
    ['ESC', 'app=\u001b[31m', 'control'],
    ['DEL', 'app=a\u007f', 'control'],
    ['a C1 control (NEL)', 'app=a\u0085', 'control'],
    ['a line separator', 'app=a\u2028', 'control'],
    ['a right-to-left override', 'app=a\u202e', 'invisible'],
    ['a left-to-right mark', 'app=a\u200e', 'invisible'],
    ['a first-strong isolate', 'app=\u2068a', 'invisible'],
    ['a zero-width space', 'app=a\u200b', 'invisible'],
    ['a zero-width joiner', 'app=a\u200d', 'invisible'],
    ['a byte order mark', 'app=\ufeffa', 'invisible'],
    ['a soft hyphen', 'app=a\u00ad', 'invisible'],
    ['a variation selector', 'app=a\ufe0f', 'invisible'],
    ['a Hangul filler', 'app=a\u3164', 'invisible'],
    ['a no-break space', 'app=a\u00a0b', 'invisible'],
    ['an ideographic space', 'app=a\u3000b', 'invisible'],
    ['private use', 'app=\ue000', 'invisible'],
    ['an unassigned code point', 'app=\u{e0fff}', 'invisible'],
    ['a lone surrogate', 'app=\ud800', 'invisible'],
    ['a backslash', 'app=a\\', 'backslash'],
    ['a line one longer than allowed', `app=${'x'.repeat(MAX_COMMAND_LINE)}`, 'too-long'],
  ])('refuses %s, and says so', (_name, word, reason) => {
    expect(commandLine([...base, word])).toEqual({ line: null, reason });
  });

  it('shows a line of exactly the longest length', () => {
    const argv = [...base, 'x'];
    const fill = 'x'.repeat(MAX_COMMAND_LINE - shellLine(argv).length);
    expect(commandLine([...base, `x${fill}`]).line).toHaveLength(MAX_COMMAND_LINE);
    expect(commandLine([...base, `xx${fill}`]).reason).toBe('too-long');
  });

  it('shows letters of every script, emoji and typographic quotes: they are plain text', () => {
    expect(commandLine([...base, 'app=café-日本-🚀-„x“']).line).toBe(
      "deploy-watchdog silence --match 'app=café-日本-🚀-„x“'",
    );
  });
});
