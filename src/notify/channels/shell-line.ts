/**
 * Commands shown to people to paste into a shell ("To silence: `deploy-watchdog silence …`").
 * A command is built as its words (argv) and turned into one POSIX shell line here, once; each
 * renderer then escapes that line for its medium without changing a character a person copies.
 * Quoting comes first and escaping second, never the other way round: a renderer that rewrote
 * characters after quoting (a backtick turned into a quote) could open a quote the shell closes
 * elsewhere and run what a value says.
 *
 * A line that cannot be shown safely is not shown at all, never altered into something else
 * (see {@link UNSHOWABLE}).
 */

/**
 * Characters a word may hold and still be written without quotes, in bash, dash, zsh and fish:
 * no glob (`* ? [`), no expansion (`$ ~ { ! %`), no quote, comment, redirection or separator.
 */
const BARE_WORD = /^[A-Za-z0-9_./:@+,-][A-Za-z0-9_./:@+,=-]*$/;
// (A bare word never starts with `=`: zsh expands `=name` to the path of the command `name`.)

/**
 * One word for a POSIX shell: as it is when it is plain (`check=failed_runs`), else in single
 * quotes, in which every character is literal, with each `'` written `'\''` (close the quote,
 * an escaped quote, open again). The empty word is `''`.
 */
export function shellWord(word: string): string {
  return BARE_WORD.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The words as one shell line that runs exactly them, separated by single spaces. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}

/** Longest command line shown: a longer one cannot be read over before it is run. */
export const MAX_COMMAND_LINE = 500;

/** Why a command line is not shown. */
export type UnshowableReason = 'control' | 'invisible' | 'backslash' | 'too-long';

/**
 * C0 and C1 controls (NUL, TAB, CR, LF, ESC…), DEL, and the line and paragraph separators: a
 * line break ends the command early, the others cannot be seen or typed back.
 */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/**
 * What a reader cannot see or would misread: format characters (the bidi controls U+202A–202E
 * and U+2066–2069 reorder what is shown, zero-width ones hide), default-ignorable code points
 * (the Hangul fillers, variation selectors), private use, unassigned code points, lone surrogates,
 * and every space but the plain one (a no-break space reads as a word break and is not one).
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}\p{Cs}]|(?! )\p{Zs}/u;

/**
 * The checks a command must pass to be shown, in order, each with what would go wrong.
 *   control    a newline in a value would end the line there and run the rest as its own command
 *   invisible  what a reader sees (or trusts) would not be what runs
 *   backslash  inside single quotes fish reads `\'` and `\\` as escapes, so a value could end
 *              the quote early there and run its remainder; no other shell needs it
 *   too-long   nobody reads a command that long before running it
 */
const UNSHOWABLE: readonly (readonly [UnshowableReason, (argv: readonly string[], line: string) => boolean])[] = [
  ['control', (_argv, line) => CONTROL.test(line)],
  ['invisible', (_argv, line) => INVISIBLE.test(line)],
  ['backslash', (argv) => argv.some((w) => w.includes('\\'))],
  ['too-long', (_argv, line) => line.length > MAX_COMMAND_LINE],
];

/** A command as shown, or why it is not. */
export type CommandLine = { line: string; reason?: undefined } | { line: null; reason: UnshowableReason };

/**
 * The shell line of `argv` when it can be shown for pasting in any medium, or the reason it
 * cannot. A medium may refuse more (Slack cannot show a backtick inside a code span).
 */
export function commandLine(argv: readonly string[]): CommandLine {
  const line = shellLine(argv);
  const refused = UNSHOWABLE.find(([, test]) => test(argv, line));
  return refused ? { line: null, reason: refused[0] } : { line };
}
