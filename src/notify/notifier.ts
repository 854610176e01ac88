/**
 * The notification pipeline behind one facade for the composition root: events and notices go
 * into the outbox in the caller's transaction; a delivery loop of its own sends them; the digest
 * and the heartbeat ride along. Built once from config; nothing here is global.
 */
import type { CommittedCycle } from '../alerts/commit-findings.js';
import type { AlertEvent } from '../alerts/alert-event.js';
import type { AlertRow } from '../alerts/alert-store.js';
import { activeSilenceFor, listSilences } from '../alerts/silences.js';
import { silentLogger } from '../lib/logger.js';
import type { Store } from '../state/store.js';
import type { AlertContextSource } from './alert-context-source.js';
import type { Channel, NoticeNotification } from './channels/channel.js';
import { Delivery, type DeliveryOptions } from './delivery.js';
import { Digest, type DigestOptions } from './digest.js';
import { Heartbeat, type HeartbeatOptions } from './heartbeat.js';
import type { AlertDefaults, NotifySettings } from './notify-settings.js';
import { Outbox, type SilenceLookup } from './outbox.js';
import { OutboxStore } from './outbox-store.js';
import { TimeToAlert } from './time-to-alert.js';
import { TimeToAlertStore } from './time-to-alert-store.js';
import { Router } from './router.js';

/**
 * What {@link createNotifier} needs. The channels (built by name, see `buildChannels`), clock,
 * logger, metrics, jitter and claim grace are handed to the delivery loop as they are; the
 * dispatcher to the heartbeat, and what remediation did to the daily digest.
 */
export interface NotifierOptions
  extends
    Pick<DeliveryOptions, 'channels' | 'clock' | 'logger' | 'metrics' | 'random' | 'claimGraceMs'>,
    Pick<HeartbeatOptions, 'dispatcher'>,
    Pick<DigestOptions, 'remediationSince'> {
  store: Store;
  /** `config.notify` (channels are passed built, below). */
  notify: NotifySettings;
  /** `config.alerts`: the routes' defaults. */
  alerts: AlertDefaults;
  /** The alerts' context (`src/context/`): new alerts' messages wait for it and show it. Absent: none. */
  context?: AlertContextSource;
}

/**
 * The notification pipeline as the rest of the daemon uses it: what {@link createNotifier} answers,
 * a cycle stage (`take`) with the members documented there.
 */
export type Notifier = ReturnType<typeof createNotifier>;

/**
 * What a channel that keeps a message per alert says when the alert's record begins being worked
 * on again (a failed run retried): the alert as it stands, in its living message and its thread
 * only; nowhere when no message shows the alert (a silenced one, one not delivered yet).
 */
export function underwayNotice(alert: AlertRow): NoticeNotification {
  return { type: 'notice', topic: 'underway', title: alert.summary, fingerprint: alert.fingerprint, threadOnly: true };
}

/** Builds the notification pipeline from a config the load checked (`Router.fromSettings`). */
export function createNotifier(options: NotifierOptions) {
  const { store, notify, alerts, channels, clock, context } = options;
  const base = options.logger ?? silentLogger;
  // Delivery and the heartbeat name their own stage; a child of this one would write the `stage`
  // key twice ({"stage":"notify","stage":"delivery"}), so they get the base logger.
  const logger = base.child({ stage: 'notify' });
  const names = [...channels.keys()];
  /** The names of the channels whose kind says yes (a living message's acknowledgements, progress). */
  const channelsThat = (says: (c: Channel) => boolean) =>
    new Set([...channels].filter(([, c]) => says(c)).map(([n]) => n));
  const router = Router.fromSettings(notify, alerts, names);
  const progress = channelsThat((c) => c.showsProgress === true);
  const rows = new OutboxStore(store);
  // The silences in force, read from the store once per pass. One whose stored pattern cannot be
  // run safely mutes nothing, and is named once in the log.
  const refusedSilences = new Set<string>();
  const silencesAt = (now: number): SilenceLookup => {
    const list = listSilences(store, { now });
    for (const s of list) {
      if (s.refused === null || refusedSilences.has(s.id)) continue;
      refusedSilences.add(s.id);
      logger.warn({ silence: s.id }, `silence ${s.id} mutes nothing: ${s.refused}; end it and make it again`);
    }
    return (labels) => activeSilenceFor(list, labels, now)?.id;
  };
  const outbox = new Outbox(rows, {
    router,
    settings: notify,
    silencesAt,
    logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(context ? { context } : {}),
    showsAcknowledgements: channelsThat((c) => c.showsAcknowledgements === true),
  });
  const digest = new Digest({
    settings: notify.digest,
    outbox,
    router,
    maxItems: notify.max_items_per_message,
    logger,
    ...(options.remediationSince ? { remediationSince: options.remediationSince } : {}),
  });
  // The channels, clock, logger, metrics, jitter and claim grace as given.
  const delivery = new Delivery({
    ...options,
    rows,
    settings: notify,
    housekeeping: (now) => {
      outbox.routeQueued(now);
      outbox.release(now);
      outbox.escalate(now);
      digest.enqueueDue(now);
    },
    ...(context ? { attach: (event: AlertEvent) => context.attach(event) } : {}),
    timeToAlert: new TimeToAlert(new TimeToAlertStore(store), options.metrics),
  });
  // A dispatcher left out is undefined: the heartbeat uses the global one.
  const heartbeat =
    notify.heartbeat &&
    new Heartbeat({
      settings: notify.heartbeat,
      clock,
      logger: base,
      dispatcher: options.dispatcher,
      held: () => undelivered(rows, channels),
    });

  // Each channel's credentials, checked once at start (a bot token Slack refuses) and said, naming
  // the channel; nothing waits for it, and a send finds the same answer by itself.
  let verifying: AbortController | undefined;
  const verify = (): void => {
    verifying = new AbortController();
    for (const [name, channel] of channels) {
      void channel.verify?.(verifying.signal).then((result) => {
        if (result.outcome === 'ok' || verifying?.signal.aborted) return;
        const line = `channel ${name} cannot deliver: ${result.reason}`;
        if (result.outcome === 'permanent') logger.error({ channel: name, reason: result.reason }, line);
        else logger.warn({ channel: name, reason: result.reason }, `${line} (temporary)`);
      });
    }
  };

  return {
    router,
    /** The channels told when a remediation starts, not only how it ended (`Channel.showsProgress`). */
    progressChannels: progress,
    /**
     * The repeat interval to give the alert lifecycle: the smallest of every route and `alerts`.
     * Routes with a longer one hold a repeat until their own has passed (per channel, `repeat_waiting`).
     */
    lifecycleRepeatIntervalMs: router.smallestRepeatIntervalMs(),
    /** Routes, decides and queues events; call inside the transaction that wrote them. */
    enqueue: (events: readonly AlertEvent[], now: number) => outbox.enqueue(events, now),
    take: (cycle: CommittedCycle) => {
      if (cycle.events.length > 0) outbox.enqueue(cycle.events, cycle.now);
      for (const alert of cycle.underway) {
        // Said where a message per alert shows it: one more line in its thread, no new message.
        const to = router.route(alert.labels, alert.severity).filter((t) => progress.has(t.channel));
        const channels = [...new Set(to.map((t) => t.channel))];
        if (channels.length > 0) outbox.notice(underwayNotice(alert), channels, cycle.now);
      }
    },
    /**
     * Queues a notice (a remediation outcome, say) for the given channels, every channel by
     * default; call inside the transaction of the change it reports, or alone (it opens one).
     */
    notice: (notification: NoticeNotification, to: readonly string[] = names, now = clock.now()) =>
      store.transaction(() => outbox.notice(notification, to, now)),
    /** Pings the heartbeat URL if configured and due; call after a healthy cycle. Never blocks. */
    heartbeat: () => heartbeat?.beat() ?? 'off',
    /**
     * Something may go now (an alert's context was read, someone acknowledged an alert): routes what
     * waits to be routed, releases what is held, and wakes the delivery loop.
     */
    wake: () => delivery.wake(),
    /** Starts the delivery loop. */
    start: () => {
      delivery.start();
      verify();
    },
    /** Stops the delivery loop now, abandoning sends in flight (their rows stay due). */
    stop: async () => {
      verifying?.abort();
      await delivery.stop();
      await heartbeat?.settle();
    },
    /** Stops the loop and sends what is due within `deadlineMs` (SIGTERM). */
    flush: async (deadlineMs: number) => {
      verifying?.abort();
      const report = await delivery.flush(deadlineMs);
      await heartbeat?.settle();
      return report;
    },
    /** One delivery round now (tests, `check`). */
    deliverDue: (now?: number) => delivery.deliverDue(now),
  };
}

/**
 * Why no message can get out now, if so: every channel that sends somewhere (not `log`) has
 * messages waiting and failed its last try. A channel with nothing waiting is not failing, however
 * its last try went.
 */
function undelivered(rows: OutboxStore, channels: ReadonlyMap<string, Channel>): string | undefined {
  const outward = [...channels].filter(([, c]) => c.kind !== 'log').map(([name]) => name);
  if (outward.length === 0) return undefined;
  // The backlog first: one read, and a channel with nothing waiting ends the question.
  const backlog = rows.backlog();
  const failing = (name: string) =>
    (backlog.get(name)?.pending ?? 0) > 0 && rows.channelState(name).consecutiveFailures > 0;
  if (!outward.every(failing)) return undefined;
  return `no channel delivers: ${outward.join(', ')} failed their last try with messages waiting`;
}
