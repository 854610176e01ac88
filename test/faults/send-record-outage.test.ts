/**
 * The window of issue 24's one duplicate, made to happen on purpose: a leader's message is accepted
 * by the receiver (a real SMTP server, a Slack stand-in) and, at that very moment, the leader loses
 * PostgreSQL (its proxy cut: connections refused; or hung: nothing forwarded, its wait cut at the
 * leader's deadline), so its "sent" cannot be written. Another replica then delivers the same
 * outbox on the same server. Two stores on one real PostgreSQL, one ManualClock.
 *
 * - The old leader keeps what it knows (a receipt) and writes it once its connection works again,
 *   whether it leads or not; the next leader leaves rows another term was sending alone for a
 *   grace (two leases), and records the receipt's "sent" instead of sending: one message.
 * - When the old leader never comes back (it crashed, or stays cut off), the next leader sends
 *   such a row again after the grace, once: the one duplicate that cannot be excluded
 *   (docs/high-availability.md), and never before the grace has passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { buildChannels, closeChannels } from '../../src/notify/build-channels.js';
import type { Channel } from '../../src/notify/channels/channel.js';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { createNotifier, type Notifier } from '../../src/notify/notifier.js';
import { FencedError } from '../../src/state/fenced-error.js';
import { Store } from '../../src/state/store.js';
import { notifySettings, SECOND, T0 } from '../notify/notify-fixture.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { testCluster } from '../helpers/state-backends.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** How long the next leader leaves another term's sends alone: two leases of 10 s. */
const GRACE_MS = 20 * SECOND;
/** How long the old leader's wait on a hung server lasts before its deadline cuts it (its remaining term). */
const DEADLINE_MS = 2 * SECOND;

let mail: SmtpSink;
let slack: WebhookReceiver;

beforeAll(async () => {
  mail = await startSmtpSink();
  slack = await startWebhookReceiver();
});
afterAll(async () => {
  await mail.close();
  await slack.close();
});

/** One replica: its store (through `proxy` when given), channels and notifier on the shared clock. */
interface Replica {
  store: Store;
  notifier: Notifier;
  channels: Map<string, Channel>;
}

const CHANNELS = () => [
  {
    name: 'mail',
    type: 'email',
    smtp: { host: mail.host, port: mail.port, secure: 'none', timeout: 5000 },
    from: 'dw@example.com',
    to: ['ops@example.com'],
  },
  { name: 'slack', type: 'slack', webhook_url: slack.url, timeout: 5000 },
];

/**
 * Opens a replica on `url`. `afterAccepted` runs when a send was accepted, before the channel
 * answers the delivery loop: where the test takes the database away. A leader's store waits for
 * PostgreSQL no longer than its deadline (as `app/replica-role.ts` sets it), cut there as a step-down.
 */
function openReplica(url: string, clock: ManualClock, afterAccepted?: () => Promise<void>): Replica {
  // From the first round on (opening migrates, which a loaded machine may take seconds to do).
  let leading = false;
  const store = Store.openPostgres(
    { url: new Secret(url), connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 },
    {
      waitLimit: {
        leftMs: () => (leading ? DEADLINE_MS : undefined),
        exceeded: () => new FencedError('the lease could not be renewed in time'),
      },
    },
  );
  const settings = notifySettings({
    delivery: {
      max_age: 3_600_000,
      initial_backoff: SECOND,
      max_backoff: 2 * SECOND,
      timeout: 5 * SECOND,
      interval: SECOND,
    },
  });
  const channels = buildChannels(
    CHANNELS().map((c) => channelConfigSchema.parse(c)),
    { logger: silentLogger, clock, store, maxItemsPerMessage: settings.max_items_per_message },
  );
  if (afterAccepted) for (const [name, c] of channels) channels.set(name, faultAfterAccepted(c, afterAccepted));
  const notifier = createNotifier({
    store,
    notify: settings,
    alerts: { repeat_interval: 3_600_000, send_resolved: true },
    channels,
    clock,
    logger: silentLogger,
    random: () => 1,
    claimGraceMs: GRACE_MS,
  });
  leading = true;
  return { store, notifier, channels };
}

/** The channel, with `fault` run after the receiver accepted a message and before the loop hears so. */
function faultAfterAccepted(channel: Channel, fault: () => Promise<void>): Channel {
  return new Proxy(channel, {
    get(target, key) {
      if (key === 'send') {
        return async (message: unknown, signal?: AbortSignal) => {
          const result = await target.send(message, signal);
          if (result.outcome === 'ok') await fault();
          return result;
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const accepted = (channel: string) => (channel === 'mail' ? mail.messages.length : slack.received.length);

async function close(r: Replica): Promise<void> {
  await r.notifier.flush(0).catch(() => undefined);
  await closeChannels(r.channels.values());
  r.store.close();
}

/** The row's status as the state holds it. */
function status(store: Store): { status: string; sent_at: number | null } {
  return store.db.prepare(`SELECT status, sent_at FROM outbox`).get() as { status: string; sent_at: number | null };
}

/** Receipts written and not yet read by a leader. */
function receipts(store: Store): number {
  return Number((store.db.prepare('SELECT COUNT(*) AS n FROM outbox_receipts').get() as { n: number }).n);
}

const CASES = [
  { channel: 'mail', fault: 'cut', oldLeaderReturns: true },
  { channel: 'mail', fault: 'hang', oldLeaderReturns: true },
  { channel: 'slack', fault: 'cut', oldLeaderReturns: true },
  { channel: 'mail', fault: 'cut', oldLeaderReturns: false },
  { channel: 'slack', fault: 'cut', oldLeaderReturns: false },
] as const;

describe('a message accepted as the leader loses PostgreSQL', () => {
  it.each(CASES)(
    '$channel, database $fault, old leader back: $oldLeaderReturns',
    async ({ channel, fault, oldLeaderReturns }) => {
      const cluster = testCluster();
      const database = cluster.createDatabase();
      const url = cluster.url(database);
      const proxy: TcpProxy = await startTcpProxy(cluster.port);
      const clock = new ManualClock(T0);
      const before = accepted(channel);
      const old = openReplica(proxy.via(url), clock, () => (fault === 'cut' ? proxy.cut() : proxy.hang()));
      const next = openReplica(url, clock);
      try {
        old.notifier.notice({ type: 'notice', topic: 'test', title: 'deploy of shop failed' }, [channel], clock.now());
        const sentAt = clock.now();
        // Accepted, then the database went: the old leader's round fails where it records the send.
        await expect(old.notifier.deliverDue()).rejects.toThrow();
        expect(accepted(channel) - before, 'accepted by the receiver').toBe(1);
        expect(status(next.store).status).toBe('pending');

        // The next leader leaves the row alone for the grace, whatever the old one does meanwhile.
        if (oldLeaderReturns) await proxy.restore();
        // Small steps while the old leader comes back; large ones while it hangs (each of its tries
        // waits for the hung server in real time, on this thread).
        const step = oldLeaderReturns ? SECOND / 4 : GRACE_MS / 5;
        let waited = 0;
        for (; waited + step < GRACE_MS; waited += step) {
          clock.advance(step);
          // Real time for the old leader's receipt to be written (its own loop, on the same clock;
          // its connection made anew after a hang: a worker thread started, seconds on a loaded machine).
          await new Promise((r) => setTimeout(r, oldLeaderReturns ? 100 : 10));
          await next.notifier.deliverDue();
          expect(accepted(channel) - before, `sent again ${waited + step}ms into the grace`).toBe(1);
          if (oldLeaderReturns && status(next.store).status === 'sent') break;
        }
        if (oldLeaderReturns) {
          // Recorded sent from the old leader's receipt, at the time it was accepted: one message.
          expect(status(next.store)).toEqual({ status: 'sent', sent_at: sentAt });
          clock.advance(GRACE_MS);
          await next.notifier.deliverDue();
          expect(accepted(channel) - before).toBe(1);
        } else {
          // Nobody can tell whether it arrived: sent again once the grace is over, once.
          clock.advance(GRACE_MS - waited);
          await next.notifier.deliverDue();
          expect(status(next.store).status).toBe('sent');
          expect(accepted(channel) - before, 'the one duplicate, after the grace').toBe(2);
          // The old leader's receipt, written late, changes nothing.
          await proxy.restore();
          for (let i = 0; i < 60 && receipts(next.store) === 0; i++) {
            clock.advance(SECOND);
            await new Promise((r) => setTimeout(r, 100));
          }
          expect(receipts(next.store), 'the old leader wrote its receipt').toBe(1);
          await next.notifier.deliverDue();
          expect(receipts(next.store)).toBe(0);
          expect(status(next.store).status).toBe('sent');
          expect(accepted(channel) - before).toBe(2);
        }
      } finally {
        await proxy.restore();
        await close(old);
        await close(next);
        await proxy.close();
        cluster.dropDatabase(database);
      }
    },
    60_000,
  );
});
