/**
 * Just enough MIME to read back what the watchdog sends: headers (unfolded, encoded words decoded),
 * and the text/plain and text/html parts of a single or multipart/alternative message, in
 * 7bit/8bit, quoted-printable or base64. Not a general mail parser (no nested multipart beyond
 * alternative-in-mixed, no charsets other than UTF-8/ASCII): the sink only reads our own mail.
 */

/** A message read back from its raw source. */
export interface ParsedMail {
  /** Header lines in order, unfolded, as [name, value] with the value decoded. */
  headers: [string, string][];
  subject: string;
  text: string | null;
  html: string | null;
}

/** Parses a raw message (CRLF or LF line ends). */
export function parseMail(raw: string): ParsedMail {
  const { headers, body } = splitEntity(raw);
  const out: ParsedMail = { headers, subject: header(headers, 'subject') ?? '', text: null, html: null };
  collectParts(headers, body, out, 0);
  return out;
}

function splitEntity(raw: string): { headers: [string, string][]; body: string } {
  const text = raw.replace(/\r\n/g, '\n');
  const end = text.indexOf('\n\n');
  const head = end === -1 ? text : text.slice(0, end);
  const body = end === -1 ? '' : text.slice(end + 2);
  const headers: [string, string][] = [];
  for (const line of head.split('\n')) {
    if (/^[ \t]/.test(line) && headers.length > 0) {
      const last = headers[headers.length - 1] as [string, string];
      last[1] += ` ${line.trim()}`;
    } else {
      const colon = line.indexOf(':');
      if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
  }
  return { headers: headers.map(([n, v]) => [n, decodeWords(v)]), body };
}

function header(headers: [string, string][], name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

function collectParts(headers: [string, string][], body: string, out: ParsedMail, depth: number): void {
  const type = (header(headers, 'content-type') ?? 'text/plain').toLowerCase();
  if (type.startsWith('multipart/') && depth < 3) {
    const boundary = /boundary="?([^";]+)"?/i.exec(header(headers, 'content-type') ?? '')?.[1];
    if (!boundary) return;
    const pieces = body.split(`--${boundary}`);
    // pieces[0] is the preamble; the last one starts with "--" (the closing delimiter).
    for (const piece of pieces.slice(1)) {
      if (piece.startsWith('--')) break;
      const part = splitEntity(piece.replace(/^\n/, ''));
      collectParts(part.headers, part.body.replace(/\n$/, ''), out, depth + 1);
    }
    return;
  }
  const encoding = (header(headers, 'content-transfer-encoding') ?? '7bit').toLowerCase();
  const decoded = decodeBody(body, encoding);
  if (type.startsWith('text/html')) out.html ??= decoded;
  else if (type.startsWith('text/plain')) out.text ??= decoded;
}

function decodeBody(body: string, encoding: string): string {
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body.replace(/=\n/g, ''));
  return body;
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const hex = text.slice(i + 1, i + 3);
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`); blanks between two words go. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}
