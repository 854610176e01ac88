/**
 * Making text from the API safe for where it is shown: Slack mrkdwn, email headers, HTML.
 *
 * Slack: only `&`, `<` and `>` have to be escaped (https://api.slack.com/reference/surfaces/formatting#escaping);
 * with them gone no `<!channel>`, `<!here>`, `<@U123>` or `<https://evil|click>` can be formed from
 * API text. Emphasis characters (`*`, `_`, `~`) are left alone on purpose: at worst they change
 * emphasis, they cannot mention anyone or hide a link, and rewriting them would garble app names
 * people copy from the message. A backtick is not: a code span is how our messages show a command
 * to paste ("To silence: `…`"), and mrkdwn has no escape for it, so API text could show its own
 * command as ours (a tenant's deploy output is a run's failure reason). It becomes ˋ (U+02CB),
 * which reads the same and formats nothing. Our own commands are never escaped so: a command
 * holding a backtick is not shown at all (`commandSpan` in slack-render.ts).
 *
 * Commands for a shell are quoted first (`shell-line.ts`) and escaped here second, so that the
 * escaping, which the medium undoes, leaves exactly the quoted line for a person to copy.
 *
 * In every medium, and whatever the function: the characters that reorder or hide text (bidi
 * controls such as U+202E, zero-width ones) are written out as `\u{202e}` (`lib/visible-text.ts`),
 * so a name cannot display as another; and API text escaped for Slack or HTML is one line (a line
 * break the service sent becomes a space): every place such text goes is a line of our layout.
 */
import { getOrAdd } from '../../lib/get-or-add.js';
import { HIDDEN, visibleText } from '../../lib/visible-text.js';
import type { Link } from './describe.js';

const ELLIPSIS = '…';

/** Nothing escaped but the hidden characters (one object, so its pattern is made once). */
const NO_ENTITIES: Record<string, string> = {};

/** Slack's three control characters and their entities, and the backtick that would open a code span. */
const MRKDWN_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '`': '\u02cb' };

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Control characters that could end a header line or confuse a reader: C0 (CR, LF, TAB, NUL…),
 * DEL, C1 (NEL among them) and the Unicode line and paragraph separators.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_RUN = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * What {@link escapeAndCut} must look at one code point at a time with each map: the map's
 * characters, the hidden ones, and surrogates (so a pair is never cut in half). Every other
 * character is itself, one unit, and goes in runs.
 */
const SPECIAL = new WeakMap<Record<string, string>, RegExp>();

function specialOf(map: Record<string, string>): RegExp {
  return getOrAdd(SPECIAL, map, () => {
    const own = Object.keys(map).map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    return new RegExp(`[${own.join('')}${HIDDEN}\\ud800-\\udfff]`, 'g');
  });
}

/**
 * Escapes a text with `map` (a hidden character written out, half a surrogate pair replaced),
 * stopping before the result would exceed `max` UTF-16 units (an ellipsis marks the cut). Cutting
 * piece by piece means an entity (`&amp;`), a written-out `\u{202e}` or a surrogate pair (an
 * emoji) is never split in half.
 */
function escapeAndCut(text: string, max: number, map: Record<string, string>): string {
  const special = specialOf(map);
  let out = '';
  // Runs of plain characters at once, the rest code point by code point; never the whole text
  // split at once: a text of megabytes stops at `max` having looked at little more than that.
  for (let i = 0; i < text.length;) {
    special.lastIndex = i;
    const end = special.exec(text)?.index ?? text.length;
    if (end > i) {
      // Room for the ellipsis unless the run ends the text.
      const room = end >= text.length ? max : max - ELLIPSIS.length;
      if (out.length + (end - i) > room) {
        return out + text.slice(i, i + Math.max(0, max - ELLIPSIS.length - out.length)) + ELLIPSIS;
      }
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const c = String.fromCodePoint(text.codePointAt(i) as number);
    i += c.length;
    // Half a surrogate pair is no character: JSON writes it as `\ud83d`, which strict readers refuse.
    const piece = map[c] ?? (isLoneSurrogate(c) ? REPLACEMENT : visibleText(c));
    const room = i >= text.length ? max : max - ELLIPSIS.length;
    if (out.length + piece.length > room) return out + ELLIPSIS;
    out += piece;
  }
  return out;
}

/** What stands for half a surrogate pair: U+FFFD, as a UTF-8 decoder shows a broken character. */
const REPLACEMENT = '\ufffd';

/** Whether a code point read from a string is a surrogate without its other half. */
function isLoneSurrogate(c: string): boolean {
  const unit = c.charCodeAt(0);
  return c.length === 1 && unit >= 0xd800 && unit <= 0xdfff;
}

/**
 * Cuts a text to at most `max` UTF-16 units, ending with an ellipsis when cut. No escaping but the
 * hidden characters written out; line breaks are kept (it cuts our own multi-line mrkdwn too).
 */
export function cutText(text: string, max: number): string {
  return escapeAndCut(text, max, NO_ENTITIES);
}

/**
 * Escapes API text for Slack mrkdwn (`&`, `<`, `>`; a backtick written ˋ), on one line, and cuts
 * the result to `max` characters (escaped length, which is what Slack counts).
 */
export function escapeMrkdwn(text: string, max = 3000): string {
  return escapeAndCut(text.replace(CONTROL_RUN, ' '), max, MRKDWN_ENTITIES);
}

/** Escapes text for HTML element content and attribute values, on one line, and cuts it to `max` characters. */
export function escapeHtml(text: string, max = 10_000): string {
  return escapeAndCut(text.replace(CONTROL_RUN, ' '), max, HTML_ENTITIES);
}

/** Control characters but the line feed: what {@link escapeHtmlLines} turns into spaces. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_RUN_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * HTML text that keeps its line breaks (a form's textarea, a `<pre>`): as {@link escapeHtml}, but a
 * line feed stays one (CR LF becomes LF), for the places where HTML shows lines as lines.
 */
export function escapeHtmlLines(text: string, max = 10_000): string {
  return escapeAndCut(text.replace(/\r\n?/g, '\n').replace(CONTROL_RUN_BUT_LF, ' '), max, HTML_ENTITIES);
}

/**
 * API text as plain text (a subject, a plain-text body, a field a service shows as text): every run
 * of control characters becomes one space (line feeds kept with `keepLines`), hidden characters are
 * written out, and it is cut to `max`; nothing else, as plain text has no markup. Unlike
 * {@link oneLine} it is not trimmed: a template's value keeps its place in the line.
 */
export function plainText(text: string, max = 1000, keepLines = false): string {
  const folded = keepLines
    ? text.replace(/\r\n?/g, '\n').replace(CONTROL_RUN_BUT_LF, ' ')
    : text.replace(CONTROL_RUN, ' ');
  return cutText(folded, max);
}

/**
 * Text for a mail header (or any one-line place): every run of control characters, CR and LF
 * among them, becomes one space, so API text can never start a new header; then cut.
 */
export function oneLine(text: string, max = 200): string {
  return cutText(text.replace(CONTROL_RUN, ' ').trim(), max);
}

/**
 * An http(s) URL safe to place in a link, or null. The URL is parsed and re-serialised (which
 * percent-encodes spaces, quotes and angle brackets) and `|` is encoded too, since it separates a
 * Slack link from its label. Anything that is not http(s) (`javascript:`, `mailto:`, a relative
 * path) is refused rather than repaired.
 */
export function safeHttpUrl(url: string | null | undefined, max = 2000): string | null {
  if (!url) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  // Credentials in a link would be shown to every reader; such a URL is not shown at all.
  if (parsed.username || parsed.password) return null;
  const href = parsed.href.replace(/\|/g, '%7C').replace(/[<>"'\s]/g, (c) => encodeURIComponent(c));
  return href.length <= max ? href : null;
}

/** The links whose URL is a safe http(s) address ({@link safeHttpUrl}), each URL once, with the first label it came with. */
export function safeLinks(links: readonly { label: string; url: string | null | undefined }[]): Link[] {
  const out: Link[] = [];
  for (const { label, url } of links) {
    const safe = safeHttpUrl(url);
    if (safe && !out.some((l) => l.url === safe)) out.push({ label, url: safe });
  }
  return out;
}

/**
 * A Slack link `<url|label>` with the URL validated and the label escaped; just the escaped label
 * when the URL is missing or unsafe.
 */
export function mrkdwnLink(url: string | null | undefined, label: string, maxLabel = 200): string {
  const text = escapeMrkdwn(label, maxLabel);
  const href = safeHttpUrl(url);
  // Slack wants `&` inside the link target escaped too; it unescapes it before opening the link.
  return href ? `<${href.replace(/&/g, '&amp;')}|${text}>` : text;
}

/** A map escaping each of `chars` with a backslash (CommonMark escapes any ASCII punctuation so). */
function backslashed(chars: string): Record<string, string> {
  return Object.fromEntries([...chars].map((c) => [c, `\\${c}`]));
}

/**
 * What makes markdown of API text in a Teams Adaptive Card TextBlock or FactSet anywhere in a line:
 * emphasis (`*`, `_`, `~`), links (`[`, `]`, `(`, `)`), code, tables, tags (`<at>`).
 */
const TEAMS_MARKDOWN = backslashed('\\`*_~[]()<>|');

/** As {@link TEAMS_MARKDOWN} for Discord, with its mentions (`@everyone`, `<@123>`) and spoilers (`||`). */
const DISCORD_MARKDOWN = backslashed('\\`*_~[]()<|@');

/**
 * What makes markdown only at the start of a block (where API text may stand: a fact's value, an
 * embed's description): a list (`- `, `+ `, `1. `), a heading (`#`), a quote (`>`).
 */
const BLOCK_START = /^(\s{0,3})([-+#>]|\d{1,9}\.)/;

/**
 * Escapes API text for a Teams Adaptive Card's markdown (TextBlock, FactSet), on one line, cut to
 * `max` characters as escaped: every character that could format, link or mention is
 * backslash-escaped, and so is a list, heading or quote marker that would start it ("1. ", "- ", "#").
 */
export function escapeTeamsMarkdown(text: string, max = 2000): string {
  return escapeMarkdown(text, max, TEAMS_MARKDOWN);
}

/**
 * Escapes API text for Discord markdown (message content, embed title, description, field), on
 * one line, cut to `max` characters as escaped: no formatting, masked link, spoiler or mention
 * can be formed from it (`@everyone` is written `\@everyone`, which Discord shows and never pings),
 * nor a list, heading or quote where it starts a line.
 */
export function escapeDiscordMarkdown(text: string, max = 1024): string {
  return escapeMarkdown(text, max, DISCORD_MARKDOWN);
}

function escapeMarkdown(text: string, max: number, map: Record<string, string>): string {
  const line = text.replace(CONTROL_RUN, ' ');
  const m = BLOCK_START.exec(line);
  if (!m) return escapeAndCut(line, max, map);
  // The marker's last character escaped (1\. or \-): text, not a list, heading or quote.
  const marker = map[m[2]!] ?? `${m[2]!.slice(0, -1)}\\${m[2]!.slice(-1)}`;
  const head = `${m[1]}${marker}`;
  return head + escapeAndCut(line.slice(m[0].length), Math.max(1, max - head.length), map);
}
