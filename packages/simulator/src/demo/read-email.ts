/**
 * An email the local SMTP sink accepted, as terminal lines: the subject, then the plain-text body
 * the watchdog wrote (its signature left out: it only repeats the channel name).
 */
import type { SinkMessage } from './peers/smtp-sink.js';

/** What the demo prints of one email. */
export interface EmailReading {
  subject: string;
  /** Subject first, then the whole body. */
  lines: string[];
  /**
   * Subject first, then the body without its indented fact rows: each event's status line, and
   * notices' own lines. The facts are the ones the Slack message beside it already shows.
   */
  brief: string[];
}

/** Reads one accepted message. */
export function readEmail(message: Pick<SinkMessage, 'subject' | 'text'>): EmailReading {
  const body = (message.text ?? '').replace(/\r\n/g, '\n');
  // "-- " on a line of its own starts the signature (RFC 3676 §4.3).
  const cut = body.split('\n-- \n')[0] ?? body;
  const lines = cut.split('\n').map((l) => l.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const subject = `Subject: ${message.subject}`;
  // The body's first line is its title, which says what the subject says.
  const brief = lines.slice(1).filter((l) => l !== '' && !/^\s/.test(l));
  return {
    subject: message.subject,
    lines: [subject, ...lines.map((l) => (l === '' ? '' : `  ${l}`))],
    brief: [subject, ...brief.map((l) => `  ${l}`)],
  };
}
