/**
 * nodemailer's SMTP transport, with two things it lacks for a daemon that runs for months:
 * - The sockets are ours. nodemailer only half-closes a socket it gives up on (`end`), so a
 *   server that accepted but never answered kept it in FIN-WAIT-2, one per timeout, and the
 *   process alive past SIGTERM. A send that failed destroys its socket at once.
 * - A send knows whether the message body was handed over, which nodemailer does only after the
 *   server's `354` to DATA. A failure after that point, with no reply from the server, is
 *   "unconfirmed": the server may have queued the message, so sending it again may duplicate it.
 */
import net from 'node:net';
import type { Readable } from 'node:stream';
import type nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { loadOnUse } from '../../lib/load-on-use.js';

/** nodemailer, loaded at an email channel's first send (~3 MB of heap with its code). */
const mailer = loadOnUse<typeof import('nodemailer')>('nodemailer');

/** How one send ended: the server's answer, or the error and whether the body had gone. */
export type SmtpSendOutcome =
  { sent: true; info: SMTPTransport.SentMessageInfo } | { sent: false; error: unknown; bodyHandedOver: boolean };

/** The key under which a send's tracker rides in the mail data, to the stream plugin. */
const TRACKER = 'deployWatchdogSend';

interface SendTracker {
  bodyHandedOver: boolean;
  sockets: Set<net.Socket>;
}

/** An SMTP transport whose sockets are owned and whose sends say whether the body went out. */
export class OwnedSmtpTransport {
  /** Made at the first send (see `mailer`). */
  #made: nodemailer.Transporter<SMTPTransport.SentMessageInfo> | undefined;
  readonly #open = new Set<net.Socket>();
  /** The send a new socket belongs to; sends of one channel never overlap (the delivery loop serialises them). */
  #current: SendTracker | undefined;

  constructor(
    private readonly options: SMTPTransport.Options & { host: string; port: number; connectionTimeout: number },
  ) {}

  get #transport(): nodemailer.Transporter<SMTPTransport.SentMessageInfo> {
    if (this.#made) return this.#made;
    const transport = mailer().createTransport({
      ...this.options,
      getSocket: (_options: SMTPTransport.Options, callback: (err: Error | null, socketOptions: object) => void) =>
        this.#connect(callback),
    });
    // After the 354, nodemailer reads the composed message to its end: that is the body handed over.
    transport.use('stream', (mail, done) => {
      const tracker = (mail.data as Record<string, unknown>)[TRACKER] as SendTracker | undefined;
      if (tracker) {
        mail.message.processFunc((input: Readable) => {
          input.once('end', () => (tracker.bodyHandedOver = true));
          return input;
        });
      }
      done();
    });
    this.#made = transport;
    return transport;
  }

  /** Sends one message; never throws. */
  async send(mail: Mail.Options): Promise<SmtpSendOutcome> {
    const tracker: SendTracker = { bodyHandedOver: false, sockets: new Set() };
    this.#current = tracker;
    try {
      const info = await this.#transport.sendMail({ ...mail, [TRACKER]: tracker } as Mail.Options);
      return { sent: true, info };
    } catch (error) {
      // Given up: the socket goes now, whatever the server does or does not do with its end.
      for (const socket of tracker.sockets) socket.destroy();
      return { sent: false, error, bodyHandedOver: tracker.bodyHandedOver };
    } finally {
      if (this.#current === tracker) this.#current = undefined;
    }
  }

  /** Closes the transport and destroys every socket still open. */
  close(): void {
    this.#made?.close();
    for (const socket of this.#open) socket.destroy();
  }

  /** nodemailer's `getSocket`: a connected socket of ours, or the error connecting gave. */
  #connect(callback: (err: Error | null, socketOptions: object) => void): void {
    const tracker = this.#current;
    const socket = net.connect({ host: this.options.host, port: this.options.port });
    this.#open.add(socket);
    tracker?.sockets.add(socket);
    socket.once('close', () => {
      this.#open.delete(socket);
      tracker?.sockets.delete(socket);
    });
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeListener('error', onError);
      if (err) {
        socket.destroy();
        callback(err, {});
      } else callback(null, { connection: socket });
    };
    // Named as nodemailer names its own connection errors, so a reason says where it failed.
    const onError = (err: Error) => settle(Object.assign(err, { command: 'CONN' }));
    const timer = setTimeout(
      () => settle(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT', command: 'CONN' })),
      this.options.connectionTimeout,
    );
    socket.once('error', onError);
    // A late error (after nodemailer took the socket, or after it was given up) must not crash the process.
    socket.on('error', () => undefined);
    socket.once('connect', () => settle(null));
  }
}
