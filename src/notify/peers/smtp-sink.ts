import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { parseMail, type ParsedMail } from './parse-mail.js';

/**
 * How the sink answers: `ok` takes every message; `tempfail-*` answers 451 (try again later) and
 * `reject-*` 550 (refused), at RCPT TO or after DATA, so the demo and tests can show retries and
 * permanent failures against a real SMTP conversation.
 */
export type SmtpSinkMode = 'ok' | 'tempfail-rcpt' | 'reject-rcpt' | 'tempfail-data' | 'reject-data';

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

/** A message the sink accepted. */
export interface SinkMessage extends ParsedMail {
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
    onRcptTo(_address, _session, callback) {
      if (mode === 'tempfail-rcpt') return callback(reply(451, '4.3.0 Temporary failure, try again later'));
      if (mode === 'reject-rcpt') return callback(reply(550, '5.1.1 Mailbox unavailable'));
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
        const message: SinkMessage = {
          ...parseMail(raw),
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((r) => r.address),
          raw,
        };
        messages.push(message);
        if (messages.length > maxKept) messages.shift();
        options.onMessage?.(message);
        return callback();
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
