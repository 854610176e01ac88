/**
 * What a person does with a "To silence" line: take it out of the message as it is shown (Slack's
 * code span, the email's `<code>` element or text line) and run it in a shell. Here the shell is
 * real (bash, dash, interactive bash with history expansion) and `deploy-watchdog` is a stand-in
 * that records the words it was given.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { SlackLikePayload } from './webhook-receiver.js';

const PREFIX = 'To silence: ';

/**
 * The command of a Slack message as a person copies it: the text inside the code span, with
 * Slack's `&lt;`, `&gt;` and `&amp;` undone (`&amp;` last, as Slack does, so `&amp;lt;` stays
 * `&lt;`). Null when the message has no "To silence" line.
 */
export function slackCommand(payload: SlackLikePayload): string | null {
  const lines = (payload.blocks ?? [])
    .flatMap((b) => (b.elements ?? []).map((e) => e.text ?? ''))
    .filter((t) => t.startsWith(PREFIX));
  if (lines.length === 0) return null;
  expect(lines).toHaveLength(1);
  const span = /^To silence: `([^`]*)`$/.exec(lines[0]!);
  expect(span, 'the line is one code span and nothing else').not.toBeNull();
  return span![1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The command of a plain-text email: the rest of its one "To silence: " line; null when none. */
export function textCommand(text: string): string | null {
  const lines = text.split('\n').filter((l) => l.startsWith(PREFIX));
  if (lines.length === 0) return null;
  expect(lines).toHaveLength(1);
  return lines[0]!.slice(PREFIX.length);
}

/**
 * Python's html.parser (a real HTML tokenizer, character references decoded): the text content
 * of every `<code>` element, as JSON.
 */
const CODE_TEXTS_PY = `
import sys, json
from html.parser import HTMLParser
class Codes(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.texts = []
    def handle_starttag(self, tag, attrs):
        if tag == 'code':
            self.depth += 1
            self.texts.append('')
    def handle_endtag(self, tag):
        if tag == 'code':
            self.depth -= 1
    def handle_data(self, data):
        if self.depth > 0:
            self.texts[-1] += data
parser = Codes()
parser.feed(sys.stdin.buffer.read().decode('utf-8'))
parser.close()
print(json.dumps(parser.texts))
`;

/** The python3 interpreter itself, found once: a version manager's shim would start slowly each time. */
const PYTHON =
  spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim() || 'python3';

/** The command of an HTML email: the text content of its one `<code>` element; null when none. */
export function htmlCommand(html: string): string | null {
  // -I -S: isolated from the environment and user site, without the site module (faster to start).
  const parsed = spawnSync(PYTHON, ['-I', '-S', '-c', CODE_TEXTS_PY], { input: html, encoding: 'utf8' });
  expect(parsed.error, 'python3 parses the HTML').toBeUndefined();
  expect(parsed.stderr).toBe('');
  const texts = JSON.parse(parsed.stdout) as string[];
  if (texts.length === 0) return null;
  expect(texts).toHaveLength(1);
  return texts[0]!;
}

/** How a pasted line is run. */
export type PasteShell = 'bash -c' | 'dash -c' | 'bash -i';
export const PASTE_SHELLS: readonly PasteShell[] = ['bash -c', 'dash -c', 'bash -i'];

/** What running a pasted line did. */
export interface PasteRun {
  /** The words of each run of the stand-in. */
  calls: string[][];
  status: number | null;
  stdout: string;
  /** Standard error, without what interactive bash always says on a pipe (no job control, exit). */
  stderr: string;
}

/** A temp dir with a `deploy-watchdog` stand-in on its PATH, and a marker no run may create. */
export interface PasteBench {
  dir: string;
  /** A file a hostile value tries to create; it must never exist. */
  marker: string;
  run(line: string, shell: PasteShell): PasteRun;
  cleanup(): void;
}

/** Interactive bash on a pipe says these itself; anything else on stderr is something that ran or failed. */
const INTERACTIVE_NOISE = /^(bash: cannot set terminal process group .*|bash: no job control in this shell|exit)$/;

export function pasteBench(): PasteBench {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-paste-'));
  const bin = path.join(dir, 'bin');
  const calls = path.join(dir, 'calls');
  const cwd = path.join(dir, 'cwd');
  for (const d of [bin, calls, cwd]) fs.mkdirSync(d);
  // A file an unquoted `app=*` glob would expand to.
  fs.writeFileSync(path.join(cwd, 'app=globbed'), '');
  const standIn = path.join(bin, 'deploy-watchdog');
  fs.writeFileSync(
    standIn,
    `#!/bin/sh\n# Records its words, NUL-separated, one file per run.\nprintf '%s\\0' "$@" > '${calls}'/$$\n`,
    { mode: 0o755 },
  );
  const marker = path.join(dir, 'pwned');
  return {
    dir,
    marker,
    run(line, shell) {
      for (const f of fs.readdirSync(calls)) fs.rmSync(path.join(calls, f));
      // Real tools stay on the PATH, so a command a value smuggled in would really run.
      const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: dir, PS1: '', PS2: '' };
      const result =
        shell === 'bash -i'
          ? // A line in the history first, so an expanded `!!` or `!-1` would change the words.
            spawnSync('bash', ['--norc', '--noprofile', '--noediting', '-i'], {
              cwd,
              env,
              input: `echo earlier >/dev/null\n${line}\n`,
              encoding: 'utf8',
            })
          : // Standard input is not a socket: bash would take itself for a remote shell and read an rc file.
            spawnSync(shell.split(' ')[0]!, ['-c', line], {
              cwd,
              env,
              stdio: ['ignore', 'pipe', 'pipe'],
              encoding: 'utf8',
            });
      const stderr =
        shell === 'bash -i'
          ? result.stderr
              .split('\n')
              .filter((l) => l !== '' && !INTERACTIVE_NOISE.test(l))
              .join('\n')
          : result.stderr;
      return {
        calls: fs.readdirSync(calls).map((f) => fs.readFileSync(path.join(calls, f), 'utf8').split('\0').slice(0, -1)),
        status: result.status,
        stdout: result.stdout,
        stderr,
      };
    },
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
