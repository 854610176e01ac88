/**
 * The demo's mail relay and the tests' real SMTP peer. It needs smtp-server and mailparser, which
 * are development dependencies: only the `demo` command (by a dynamic import) and the tests load it.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * How the sink answers: `ok` takes every message; `tempfail-*` answers 451 (try again later) and
 * `reject-*` 550 (refused), at RCPT TO or after DATA, so the demo and tests can show retries and
 * permanent failures against a real SMTP conversation.
 */
export type SmtpSinkMode =
  | 'ok'
  | 'tempfail-rcpt'
  | 'reject-rcpt'
  | 'tempfail-data'
  | 'reject-data'
  /** Refuses (550) every recipient whose address starts with `refused`, takes the others. */
  | 'refuse-some-rcpt'
  /** Takes the message whole (it is kept) and never answers the end of DATA. */
  | 'silent-after-data';

/** Options of {@link startSmtpSink}. */
export interface SmtpSinkOptions {
  /** Loopback by default. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** When set, AUTH is required and must match; otherwise no authentication is offered. */
  auth?: { user: string; pass: string };
  /** Called with each accepted message, e.g. to print it in the demo. */
  onMessage?: (message: SinkMessage) => void;
  /** Messages kept in `messages`; older ones are dropped (default 1000). */
  maxKept?: number;
}

/** A message the sink accepted, read back by mailparser. */
export interface SinkMessage {
  /** Header lines in order, as sent: [name, value], the value unfolded (encoded words left as they are). */
  headers: [string, string][];
  /** Decoded. */
  subject: string;
  /** The text/plain part, decoded; null when there is none. */
  text: string | null;
  /** The text/html part, decoded; null when there is none. */
  html: string | null;
  /** Envelope sender and recipients (MAIL FROM / RCPT TO). */
  from: string;
  to: string[];
  /** The message as received, headers and body. */
  raw: string;
}

/** A running SMTP sink. */
export interface SmtpSink {
  readonly host: string;
  readonly port: number;
  /** Accepted messages, oldest first. */
  readonly messages: SinkMessage[];
  setMode(mode: SmtpSinkMode): void;
  close(): Promise<void>;
}

/** mailparser reads the parts as sent and makes nothing up: no text from HTML, no links or inlined images. */
const READ_ONLY = { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true } as const;

/** What the sink keeps of a parsed message. */
function readBack(parsed: ParsedMail): Pick<SinkMessage, 'headers' | 'subject' | 'text' | 'html'> {
  return {
    headers: parsed.headerLines.map(({ line }) => {
      const colon = line.indexOf(':');
      return [
        line.slice(0, colon).trim(),
        line
          .slice(colon + 1)
          .replace(/\r?\n[ \t]+/g, ' ')
          .trim(),
      ];
    }),
    subject: parsed.subject ?? '',
    text: parsed.text ?? null,
    html: typeof parsed.html === 'string' ? parsed.html : null,
  };
}

/** An error smtp-server turns into an SMTP reply with this code. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/**
 * Starts a local SMTP server (smtp-server) in clear text with STARTTLS switched off: the
 * demo's mail relay and the tests' real peer. Pair it with an email channel whose
 * `smtp.secure` is `none`, which exists for exactly this.
 */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const maxKept = options.maxKept ?? 1000;
  const messages: SinkMessage[] = [];
  let mode: SmtpSinkMode = 'ok';
  const { auth } = options;

  const server = new SMTPServer({
    secure: false,
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    // No TLS here, so AUTH over the clear connection has to be allowed; loopback only.
    allowInsecureAuth: true,
    logger: false,
    size: 10 * 1024 * 1024,
    closeTimeout: 1000,
    onAuth(attempt, _session, callback) {
      if (auth && attempt.username === auth.user && attempt.password === auth.pass) {
        return callback(null, { user: attempt.username });
      }
      return callback(reply(535, '5.7.8 Authentication credentials invalid'));
    },
    onRcptTo(address, _session, callback) {
      if (mode === 'tempfail-rcpt') return callback(reply(451, '4.3.0 Temporary failure, try again later'));
      if (mode === 'reject-rcpt') return callback(reply(550, '5.1.1 Mailbox unavailable'));
      if (mode === 'refuse-some-rcpt' && address.address.startsWith('refused'))
        return callback(reply(550, '5.1.1 Mailbox unavailable'));
      return callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (mode === 'tempfail-data') return callback(reply(451, '4.3.0 Temporary failure, try again later'));
        if (mode === 'reject-data') return callback(reply(550, '5.7.1 Message refused'));
        const raw = Buffer.concat(chunks).toString('utf8');
        const envelope = session.envelope;
        // Accepted only once read, so a sender that got its 250 finds the message in `messages`.
        simpleParser(raw, READ_ONLY).then(
          (parsed) => {
            const message: SinkMessage = {
              ...readBack(parsed),
              from: envelope.mailFrom ? envelope.mailFrom.address : '',
              to: envelope.rcptTo.map((r) => r.address),
              raw,
            };
            messages.push(message);
            if (messages.length > maxKept) messages.shift();
            options.onMessage?.(message);
            // The message arrived; the sender is never told so.
            if (mode === 'silent-after-data') return;
            callback();
          },
          () => callback(reply(554, '5.6.0 Message could not be read')),
        );
      });
    },
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  // After a successful start, a stray connection error must not crash the process.
  server.on('error', () => undefined);
  const port = (server.server.address() as AddressInfo).port;

  return {
    host,
    port,
    messages,
    setMode(next) {
      mode = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
