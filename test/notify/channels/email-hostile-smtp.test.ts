/**
 * SMTP servers that misbehave, each a real peer on loopback: one that accepts and never greets,
 * one that refuses STARTTLS, one that refuses some recipients, one that takes a message and never
 * confirms it. The channel's answer for each, and what the delivery loop then does.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { Channel } from '../../../src/notify/channels/channel.js';
import { emailChannel, type EmailMessage } from '../../../src/notify/channels/email.js';
import { emailConfigSchema } from '../../../src/notify/channels/email-config.js';
import { Metrics } from '../../../src/lib/metrics.js';
import { until } from '../../cli/daemon-fixture.js';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.js';
import { finding, Harness, MINUTE, SECOND } from '../notify-fixture.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

const { logger } = captureLogger();
const channels: Channel<EmailMessage>[] = [];
const servers: Server[] = [];
/** Connections the raw peers below hold open: theirs, not the channel's. */
const peerSockets = new Set<Socket>();

afterAll(async () => {
  for (const c of channels) await c.close?.();
  for (const socket of peerSockets) socket.destroy();
  for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
});

function channel(
  port: number,
  over: { secure?: string; to?: string[]; auth?: { user: string; pass: string } } = {},
): Channel<EmailMessage> {
  const config = emailConfigSchema.parse({
    name: 'ops-mail',
    type: 'email',
    smtp: { host: '127.0.0.1', port, secure: over.secure ?? 'none', timeout: 1000, auth: over.auth },
    from: 'watchdog@example.com',
    to: over.to ?? ['ops@example.com'],
  });
  const c = emailChannel.create(config, { logger, clock: new ManualClock() });
  channels.push(c);
  return c;
}

/** A raw TCP peer: `onLine` answers each line the client sends; `greeting` is said on connect, if any. */
async function rawServer(greeting: string | null, onLine: (line: string, socket: Socket) => void): Promise<number> {
  // Half-open allowed and never ended from here: a peer that keeps its side of every connection.
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    peerSockets.add(socket);
    socket.on('close', () => peerSockets.delete(socket));
    socket.on('error', () => undefined);
    if (greeting !== null) socket.write(`${greeting}\r\n`);
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      let at: number;
      while ((at = buffered.indexOf('\r\n')) >= 0) {
        onLine(buffered.slice(0, at), socket);
        buffered = buffered.slice(at + 2);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** TCP sockets this process holds open now, the raw peers' own left out: the channel's. */
const clientSockets = (): number =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length - peerSockets.size;

describe('an SMTP server that misbehaves', () => {
  it('accepting and never greeting: the send times out and its socket is destroyed, not left half-closed', async () => {
    const port = await rawServer(null, () => undefined);
    const c = channel(port);
    const before = clientSockets();
    for (let i = 0; i < 3; i++) {
      const result = await c.send(c.render(alerts([alertEvent()])));
      expect(result.outcome).toBe('retryable');
      expect(result.outcome !== 'ok' && result.reason).toMatch(/timed out|Greeting never received|ETIMEDOUT/i);
    }
    // nodemailer alone ends such a socket and waits for the peer's FIN forever: three would stay.
    await until(
      'no SMTP socket left open',
      () => clientSockets() <= before,
      () => `${clientSockets()} open`,
      10_000,
    );
  });

  it('refusing STARTTLS under smtp.secure: starttls: a permanent setup error that says what to set', async () => {
    const port = await rawServer('220 relay.example ESMTP', (line, socket) => {
      const verb = line.split(' ')[0]!.toUpperCase();
      if (verb === 'EHLO') socket.write('250-relay.example\r\n250 PIPELINING\r\n');
      else if (verb === 'STARTTLS') socket.write('454 4.7.0 TLS not available due to temporary reason\r\n');
      else if (verb === 'QUIT') socket.end('221 bye\r\n');
      else socket.write('502 5.5.2 unknown\r\n');
    });
    const result = await channel(port, { secure: 'starttls' }).send(channel(port).render(alerts([alertEvent()])));
    expect(result.outcome).toBe('permanent');
    expect(result.outcome !== 'ok' && result.reason).toMatch(/refused STARTTLS.*454.*smtp\.secure/);
  });

  it('echoing the credential at the end of a long refusal: no piece of the password in the reason', async () => {
    const pass = 'pw-echoed-7f3a9c1e2b4d';
    // A long reply whose echo of the password AUTH sent straddles where the reason is cut.
    const port = await rawServer('220 relay.example ESMTP', (line, socket) => {
      const verb = line.split(' ')[0]!.toUpperCase();
      if (verb === 'EHLO') socket.write('250-relay.example\r\n250 AUTH PLAIN\r\n');
      else if (verb === 'AUTH') {
        const sent = Buffer.from(line.split(' ')[2]!, 'base64').toString('utf8').split('\u0000')[2];
        socket.write(`535 5.7.8 ${'refused '.repeat(22)}pw ${sent}\r\n`);
      } else if (verb === 'QUIT') socket.end('221 bye\r\n');
      else socket.write('502 5.5.2 unknown\r\n');
    });
    const c = channel(port, { auth: { user: 'watchdog', pass } });
    const result = await c.send(c.render(alerts([alertEvent()])));
    expect(result.outcome).toBe('permanent');
    const pieces = Array.from({ length: pass.length - 7 }, (_, i) => pass.slice(i, i + 8));
    expect(pieces.filter((p) => JSON.stringify(result).includes(p))).toEqual([]);
  });
});

/** The delivery loop's settings in these tests: a minute's pause at most. */
const DELIVERY = {
  max_age: 60 * MINUTE,
  initial_backoff: 10 * SECOND,
  max_backoff: MINUTE,
  timeout: 5 * SECOND,
  interval: 5 * SECOND,
};

describe('an SMTP sink that refuses some recipients or never confirms', () => {
  let sink: SmtpSink;
  afterEach(async () => sink.close());

  it('refusing one recipient of two: delivered to the other, and the refused one named', async () => {
    sink = await startSmtpSink();
    sink.setMode('refuse-some-rcpt');
    const c = channel(sink.port, { to: ['ops@example.com', 'refused-oncall@example.com'] });
    const result = await c.send(c.render(alerts([alertEvent()])));
    expect(result.outcome).toBe('ok');
    expect(result.outcome === 'ok' && result.refused).toMatch(/refused refused-oncall@example\.com \(550 5\.1\.1/);
    expect(sink.messages.map((m) => m.to)).toEqual([['ops@example.com']]);
  });

  it('not speaking TLS under smtp.secure: tls (port 587 given for 465): says TLS failed and what to set', async () => {
    sink = await startSmtpSink();
    const c = channel(sink.port, { secure: 'tls' });
    const result = await c.send(c.render(alerts([alertEvent()])));
    expect(result).toMatchObject({ outcome: 'retryable' });
    expect(result.outcome === 'retryable' && result.reason).toMatch(
      /^SMTP TLS failed: wrong version number; .*smtp\.secure match the port \("tls" for 465, "starttls" for 587\)/,
    );
  });

  it('taking the message and never confirming it: unconfirmed, not retryable', async () => {
    sink = await startSmtpSink();
    sink.setMode('silent-after-data');
    const c = channel(sink.port);
    const result = await c.send(c.render(alerts([alertEvent()])));
    expect(result.outcome).toBe('unconfirmed');
    expect(sink.messages).toHaveLength(1);
  });

  it('the delivery loop sends an unconfirmed message once more at most: two copies, not six', async () => {
    sink = await startSmtpSink();
    sink.setMode('silent-after-data');
    const metrics = new Metrics({ processMetrics: false });
    const h = Harness.open({
      channels: [
        {
          name: 'mail',
          type: 'email',
          smtp: { host: sink.host, port: sink.port, secure: 'none', timeout: 1000 },
          from: 'dw@example.com',
          to: ['ops@example.com'],
        },
      ],
      notify: { delivery: DELIVERY },
      metrics,
    });
    try {
      h.cycle('runs', [finding('shop')]);
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, retried: 1, waiting: 1 });
      h.clock.advance(MINUTE);
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, retried: 1, waiting: 0 });
      for (let i = 0; i < 4; i++) {
        h.clock.advance(10 * MINUTE);
        expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, retried: 0, waiting: 0 });
      }
      expect(sink.messages).toHaveLength(2);
      const metric = await metrics.notifications.get();
      expect(metric.values.find((v) => v.labels.outcome === 'unconfirmed')?.value).toBe(2);
    } finally {
      await h.close();
    }
  });
});

describe('an SMTP server that refuses the password in a storm', () => {
  it('tries one message and pauses the channel: one AUTH refused a round, not one per message', async () => {
    const sink = await startSmtpSink({ auth: { user: 'dw', pass: 'the-right-one' } });
    const h = Harness.open({
      channels: [
        {
          name: 'mail',
          type: 'email',
          smtp: {
            host: sink.host,
            port: sink.port,
            secure: 'none',
            timeout: 1000,
            auth: { user: 'dw', pass: 'wrong' },
          },
          from: 'dw@example.com',
          to: ['ops@example.com'],
        },
      ],
      // One message an app: eight messages for the eight apps.
      notify: {
        group_by: ['app'],
        delivery: DELIVERY,
      },
    });
    const refusals = () => h.log.lines.filter((l) => l.includes('rejected permanently')).length;
    try {
      h.cycle(
        'runs',
        Array.from({ length: 8 }, (_, i) => finding(`app${i}`)),
      );
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, failed: 1, waiting: 8 });
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, failed: 0, waiting: 8 });
      h.clock.advance(MINUTE);
      expect(await h.notifier.deliverDue()).toMatchObject({ sent: 0, failed: 1, waiting: 8 });
      expect(refusals()).toBe(2);
    } finally {
      await h.close();
      await sink.close();
    }
  });
});
