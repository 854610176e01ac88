/**
 * The SMTP sink reads back what it is sent (mailparser): raw messages handed to a real SMTP client
 * come out as subject, text, HTML and header lines, whatever the transfer encoding.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../../../../../test/helpers/smtp-sink.js';

const MULTIPART = [
  'From: w@example.com',
  'Subject: =?UTF-8?Q?=F0=9F=94=B4_CRITICAL?= =?UTF-8?B?IGZvbGRlZA==?=',
  '  and continued',
  'Content-Type: multipart/alternative; boundary="--b1"',
  '',
  '----b1',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'caf=C3=A9 and a soft=',
  ' break',
  '----b1',
  'Content-Type: text/html; charset=utf-8',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('<p>hello</p>').toString('base64'),
  '----b1--',
  '',
].join('\r\n');

describe('SMTP sink', () => {
  let sink: SmtpSink;
  let transport: nodemailer.Transporter;

  beforeAll(async () => {
    sink = await startSmtpSink();
    transport = nodemailer.createTransport({ host: sink.host, port: sink.port, secure: false, ignoreTLS: true });
  });

  afterAll(async () => {
    transport.close();
    await sink.close();
  });

  async function deliver(raw: string): Promise<SinkMessage> {
    const before = sink.messages.length;
    await transport.sendMail({ envelope: { from: 'w@example.com', to: ['ops@example.com'] }, raw });
    const message = sink.messages[before];
    if (!message) throw new Error('the sink kept no message');
    return message;
  }

  it('reads a multipart/alternative message with quoted-printable and base64 parts', async () => {
    const m = await deliver(MULTIPART);
    expect(m.subject).toBe('🔴 CRITICAL folded and continued');
    expect(m.text).toBe('café and a soft break');
    expect(m.html).toBe('<p>hello</p>');
    expect(m.headers.map(([n]) => n)).toEqual(['From', 'Subject', 'Content-Type']);
    expect(m).toMatchObject({ from: 'w@example.com', to: ['ops@example.com'] });
  });

  it('reads a single-part plain message', async () => {
    const m = await deliver('Subject: hi\r\n\r\nbody\r\n');
    expect(m).toMatchObject({ subject: 'hi', text: 'body\n', html: null });
  });
});
