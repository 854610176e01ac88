import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/manual-clock.js';
import type { Channel, Notification, SendResult } from '../../../src/notify/channels/channel.js';
import { emailChannel, type EmailMessage } from '../../../src/notify/channels/email.js';
import { emailConfigSchema } from '../../../src/notify/channels/email-config.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkMode } from '../../helpers/smtp-sink.js';
import { alertEvent, alerts, captureLogger } from './fixtures.js';

const USER = 'watchdog';
const PASSWORD = 'pw-7f3a-very-secret';

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('email channel against a local SMTP sink', () => {
  let sink: SmtpSink;
  const { logger, lines } = captureLogger();
  const results: SendResult[] = [];
  const channels: Channel<EmailMessage>[] = [];

  function channel(over: { port?: number; pass?: string } = {}): Channel<EmailMessage> {
    const config = emailConfigSchema.parse({
      name: 'ops-mail',
      type: 'email',
      smtp: {
        host: '127.0.0.1',
        port: over.port ?? sink.port,
        secure: 'none',
        auth: { user: USER, pass: over.pass ?? PASSWORD },
        timeout: 2000,
      },
      from: 'watchdog@example.com',
      to: ['ops@example.com', 'oncall@example.com'],
    });
    const c = emailChannel.create(config, { logger, clock: new ManualClock() });
    channels.push(c);
    return c;
  }

  async function send(c: Channel<EmailMessage>, n: Notification = alerts([alertEvent()])): Promise<SendResult> {
    const result = await c.send(c.render(n));
    results.push(result);
    return result;
  }

  beforeAll(async () => {
    sink = await startSmtpSink({ auth: { user: USER, pass: PASSWORD } });
  });

  afterEach(() => sink.setMode('ok'));

  afterAll(async () => {
    for (const c of channels) await c.close?.();
    await sink.close();
    // The password, and its base64 forms as AUTH sends them, appear in no result and no log line.
    const forms = [
      PASSWORD,
      Buffer.from(PASSWORD).toString('base64'),
      Buffer.from(`\u0000${USER}\u0000${PASSWORD}`).toString('base64'),
    ];
    for (const text of [...results.map((r) => JSON.stringify(r)), ...lines]) {
      for (const form of forms) expect(text).not.toContain(form);
    }
    expect(results.length).toBeGreaterThan(0);
  });

  it('delivers subject, text and HTML to every recipient', async () => {
    const before = sink.messages.length;
    expect(
      await send(
        channel(),
        alerts([
          alertEvent(),
          alertEvent({ id: 2, labels: { check: 'failed_runs', app: 'crm', environment_type: 'production' } }),
        ]),
      ),
    ).toEqual({
      outcome: 'ok',
    });
    const m = sink.messages[before];
    expect(m?.from).toBe('watchdog@example.com');
    expect(m?.to).toEqual(['ops@example.com', 'oncall@example.com']);
    expect(m?.subject).toBe('[deploy-watchdog] CRITICAL 2 failed runs (production)');
    expect(m?.text).toContain('CRITICAL · Update of shop (production) failed at step install');
    expect(m?.text).toMatch(/App: +crm/);
    expect(m?.html).toContain('<a href="https://shop.example.com/">shop</a>');
    expect(m?.html).toContain('exit code 1');
    // Said to be written by a program, so out-of-office replies and vacation responders stay quiet.
    expect(m?.headers).toContainEqual(['Auto-Submitted', 'auto-generated']);
  });

  it('names the app of a one-alert message in the subject, and marks a notice auto-generated too', async () => {
    const before = sink.messages.length;
    await send(channel());
    await send(channel(), { type: 'notice', topic: 'test', title: 'deploy-watchdog test message', severity: 'ok' });
    const [alert, notice] = sink.messages.slice(before);
    expect(alert?.subject).toBe('[deploy-watchdog] CRITICAL 1 failed run · shop (production)');
    expect(notice?.headers).toContainEqual(['Auto-Submitted', 'auto-generated']);
  });

  it.each<[SmtpSinkMode, SendResult['outcome'], RegExp]>([
    ['tempfail-rcpt', 'retryable', /^SMTP 451 at RCPT TO \(temporary\): 451 4\.3\.0/],
    ['tempfail-data', 'retryable', /^SMTP 451 at DATA \(temporary\): 451 4\.3\.0/],
    ['reject-rcpt', 'permanent', /^SMTP 550 at RCPT TO \(rejected\): 550 5\.1\.1.*; check the channel's to$/],
    ['reject-data', 'permanent', /^SMTP 550 at DATA \(rejected\): 550 5\.7\.1 Message refused$/],
  ])('sink mode %s → %s', async (mode, outcome, reason) => {
    sink.setMode(mode);
    const before = sink.messages.length;
    const result = await send(channel());
    expect(result.outcome).toBe(outcome);
    expect(result.outcome !== 'ok' && result.reason).toMatch(reason);
    expect(sink.messages.length).toBe(before);
  });

  it('answers permanent for a wrong password, says what to check, and never names the password', async () => {
    const result = await send(channel({ pass: `${PASSWORD}-wrong` }));
    expect(result.outcome).toBe('permanent');
    expect(result.outcome !== 'ok' && result.reason).toMatch(
      /^SMTP 535 at AUTH PLAIN \(rejected\): .*; check smtp\.auth\.user and smtp\.auth\.pass$/,
    );
    expect(JSON.stringify(result)).not.toContain(`${PASSWORD}-wrong`);
  });

  it('answers retryable when nothing listens (connection refused)', async () => {
    const result = await send(channel({ port: await closedPort() }));
    expect(result).toEqual({ outcome: 'retryable', reason: 'SMTP connection failed (ECONNREFUSED) at CONN' });
  });

  it.each(['shop\r\nBcc: victim@evil.example', 'shop\nX-Injected: yes', 'shop\r\n\r\n<html>body'])(
    'an app name or scope of %j never splits a header',
    async (attack) => {
      const before = sink.messages.length;
      const n = {
        type: 'alerts' as const,
        group: { check: 'failed_runs', environment_type: attack },
        events: [
          alertEvent({ summary: attack, labels: { check: 'failed_runs', app: attack, environment_type: attack } }),
        ],
        omitted: 0,
      };
      expect(await send(channel(), n)).toEqual({ outcome: 'ok' });
      const m = sink.messages[before];
      expect(m?.to).toEqual(['ops@example.com', 'oncall@example.com']);
      const headerNames = (m?.headers ?? []).map(([name]) => name.toLowerCase());
      expect(headerNames).not.toContain('bcc');
      expect(headerNames).not.toContain('x-injected');
      expect(headerNames.filter((h) => h === 'subject')).toHaveLength(1);
      // The app is the scope here too, so it is named once.
      expect(m?.subject).toMatch(/^\[deploy-watchdog\] CRITICAL 1 failed run \(shop/);
      // The raw header block: every line is a header or a folded continuation.
      const rawHead = (m?.raw ?? '').split(/\r?\n\r?\n/)[0] ?? '';
      for (const line of rawHead.split(/\r?\n/)) expect(line).toMatch(/^([A-Za-z0-9-]+:|[ \t])/);
    },
  );
});
