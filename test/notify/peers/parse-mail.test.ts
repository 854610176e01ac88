import { describe, expect, it } from 'vitest';
import { parseMail } from '../../../src/notify/peers/parse-mail.js';

describe('parseMail', () => {
  it('reads a multipart/alternative message with quoted-printable and base64 parts', () => {
    const raw = [
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
    const m = parseMail(raw);
    expect(m.subject).toBe('🔴 CRITICAL folded and continued');
    expect(m.text).toBe('café and a soft break');
    expect(m.html).toBe('<p>hello</p>');
    expect(m.headers.map(([n]) => n)).toEqual(['From', 'Subject', 'Content-Type']);
  });

  it('reads a single-part plain message', () => {
    const m = parseMail('Subject: hi\r\n\r\nbody\r\n');
    expect(m).toMatchObject({ subject: 'hi', text: 'body\n', html: null });
  });
});
