/**
 * The one small interface every notification channel kind implements (Alertmanager's notify
 * integrations are the model): building a message is pure and unit-tested, sending it is apart.
 * Adding a kind is one new file in this folder and one line in `registry.ts`.
 */
import type { z } from 'zod';
import type { AlertEvent } from '../../alerts/alert-event.js';
import type { Logger } from '../../lib/logger.js';
import type { Clock } from '../../lib/clock.js';
import type { Severity } from '../../lib/alert-vocabulary.js';
import type { MessageLinks } from '../message-links.js';
import type { Store } from '../../state/store.js';
import type { ChannelTemplates, TemplateParts } from './template-config.js';

/** A batch of alert events for one channel, grouped (by check and environment, say). */
export interface AlertsNotification {
  type: 'alerts';
  /** What the events have in common, shown in the title: { check: 'failed_runs', environment_type: 'production' }. */
  group: Record<string, string>;
  events: AlertEvent[];
  /** Events of the same group left out of this message because of the per-message cap ("and N more"). */
  omitted: number;
  /** How many of the omitted are resolved (counted in the headline: "2 failed runs · 1 resolved"); 0 when absent. */
  omittedResolved?: number;
  /**
   * The events counted in `omitted`, for a channel that keeps a group's state from one message to
   * the next (the Slack app's living message counts them); absent where a notification is built by hand.
   */
  omittedEvents?: AlertEvent[];
  /** The routes that sent its events to this channel, by name: their runbooks are linked. Absent: none. */
  routes?: string[];
}

/**
 * A notice that is not an alert event: a test message, the daily digest, a remediation outcome,
 * an inhibition summary. Rendered as a title, an optional severity, fields and lines.
 */
export interface NoticeNotification {
  type: 'notice';
  /** Why this notice exists: `test`, `digest`, `remediation`, `inhibition`, … */
  topic: string;
  title: string;
  severity?: Severity | 'resolved' | 'ok';
  fields?: { label: string; value: string }[];
  lines?: string[];
  url?: string | null;
  /**
   * The alert it is about, where it is about one (a remediation's outcome): a channel that keeps a
   * living message per alert group says it there. Absent: it stands alone.
   */
  fingerprint?: string;
  /**
   * Said only in the living message of the alert it is about (a retry under way): where no message
   * shows that alert, not at all. Absent: it stands alone when none does.
   */
  threadOnly?: boolean;
}

/** What a channel is asked to deliver. */
export type Notification = AlertsNotification | NoticeNotification;

/**
 * The outcome of one delivery attempt, with a named reason:
 * `ok`, with `refused` when some recipients were refused while the others took it (sending
 * again would duplicate it for the others); `retryable` (429, 5xx, network, SMTP 4xx)
 * optionally with how long to wait; `permanent` (other 4xx, SMTP 5xx, bad address): kept and
 * reported, not retried at once, and with `wholeChannel` when every message would be refused the
 * same (credentials, the recipients), so the channel pauses rather than trying each;
 * `unconfirmed`: the message went out but its receipt was never confirmed (an SMTP server silent
 * after the body), so the receiver may have it: it is sent at most once more.
 */
export type SendResult =
  | { outcome: 'ok'; refused?: string }
  | { outcome: 'retryable'; reason: string; retryAfterMs?: number }
  | { outcome: 'permanent'; reason: string; wholeChannel?: boolean }
  | { outcome: 'unconfirmed'; reason: string };

/**
 * The longest wait a receiver may ask a channel for (Retry-After, a rate-limit bucket); a larger
 * ask is capped, not trusted blindly. The delivery's pause is never longer, so one further ahead
 * shows the clock went back.
 */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/** What a channel gets from the composition root. */
export interface ChannelDeps {
  logger: Logger;
  clock: Clock;
  /**
   * The `--config` the commands a message prints ("To silence: …") must give so that they work as
   * printed: the daemon's config file, absolute. Absent when they need none, because the default
   * resolution finds that same file (see `src/cli/config-file.ts`), or when no daemon runs.
   */
  commandConfigFile?: string | undefined;
  /**
   * The channel's own templates, compiled from the `template` of its config by `buildChannels`; a
   * part absent (or all, where a channel is built alone): the kind's default templates.
   */
  templates?: ChannelTemplates | undefined;
  /** The platform's pages and the runbooks a message links to (`messageLinks` of the config). Absent: none. */
  links?: MessageLinks | undefined;
  /**
   * Where people reach the web console (`server.console.public_url`): a channel links an alert to
   * its page there, the webhook channel gives it as its externalURL. Absent: no such links.
   */
  consoleUrl?: string | undefined;
  /**
   * The label of the action a remediation policy would take on an alert if a person asked now
   * ("Retry now"), for a channel that offers it as a button; undefined when no policy would.
   * Absent: no such offer.
   */
  remedyOf?: ((fingerprint: string) => string | undefined) | undefined;
  /**
   * The state, for a channel that keeps what it sent (the Slack app's living messages). Absent
   * (`notify-test`): such a channel keeps nothing and each message stands alone.
   */
  store?: Store | undefined;
  /** `notify.max_items_per_message`, for a channel that lists the events of several deliveries in one message. */
  maxItemsPerMessage?: number | undefined;
}

/** A configured channel, ready to render and send; named by its key among the built ones (`buildChannels`). */
export interface Channel<M = unknown> {
  /** Its config's `type`; every kind but `log` sends out of the process (`undelivered`, `notifier.ts`). */
  readonly kind: string;
  /**
   * The longest one send can take before the channel answers by itself, by its own library's
   * timeouts (0: it answers at once). The delivery loop waits at least this long plus a margin
   * (`sendLimitMs` in `send-with-timeout.ts`): giving up on a send the library is still making would let it arrive
   * after all and be sent again, a duplicate on every attempt to a slow relay.
   */
  readonly sendTimeoutMs: number;
  /**
   * Whether it is told of acknowledgements unless a route says otherwise (`send_acknowledged`):
   * true for a kind that keeps one message per alert and shows who has it ("Acknowledged by …"),
   * as PagerDuty's and Grafana OnCall's Slack messages do; absent (false) for a kind that pushes a
   * new message each time (email, Slack webhooks, the log), where it would be noise.
   */
  readonly showsAcknowledgements?: boolean;
  /**
   * Whether it is told when a remediation starts (its change sent and accepted), not only how it
   * ended: true for a kind that keeps one message per alert, where the start is one more line in
   * the alert's thread; absent (false) for a kind where it would be one more message per attempt.
   */
  readonly showsProgress?: boolean;
  /** Builds the message for a notification. Pure: no I/O. */
  render(notification: Notification): M;
  /** Sends a rendered message. Never throws for delivery failures: it answers a SendResult. */
  send(message: M, signal?: AbortSignal): Promise<SendResult>;
  /**
   * Checks, before anything is sent, that the channel can deliver at all (Slack accepts its bot
   * token): the daemon asks once at start and logs what is wrong, naming the channel. Never
   * throws. Absent: there is nothing to check without sending.
   */
  verify?(signal?: AbortSignal): Promise<SendResult>;
  /** Releases connections. */
  close?(): Promise<void>;
}

/**
 * A channel kind: its config schema (validated at load) and how to build a channel from it. Its name
 * is the `type` its schema takes, and its key in `CHANNEL_KINDS` (`registry.ts`).
 */
export interface ChannelKind<C extends { name: string; type: string } = { name: string; type: string }, M = unknown> {
  readonly configSchema: z.ZodType<C>;
  /**
   * The parts of its messages a `template` in its config can shape, each with the view it renders
   * (`template-config.ts`); absent: it takes no template (its payload is structural: the webhook, the log).
   */
  readonly templateParts?: TemplateParts;
  create(config: C, deps: ChannelDeps): Channel<M>;
}

/**
 * Whether a message is news of a critical alert in one of `environments`: what a configured
 * mention (Slack's, Discord's) calls people for. Who has an alert is no reason to call everyone.
 */
export function criticalNewsIn(n: AlertsNotification, environments: readonly string[]): boolean {
  return n.events.some(
    (e) =>
      (e.kind === 'firing' || e.kind === 'repeat' || e.kind === 'escalated') &&
      e.severity === 'critical' &&
      environments.includes(e.labels.environment_type ?? ''),
  );
}

/** The {@link RenderOptions} of a channel, from its config and what the composition root gives, at this moment. */
export function renderOptionsOf(config: { name: string }, deps: ChannelDeps): RenderOptions {
  return {
    now: deps.clock.now(),
    channelName: config.name,
    commandConfigFile: deps.commandConfigFile,
    links: deps.links,
    consoleUrl: deps.consoleUrl,
    templates: deps.templates,
  };
}

/**
 * What every kind's rendering needs besides the notification; a kind's own options add to it. The
 * command's `--config`, the links, the console and the templates are the channel's (`ChannelDeps`).
 */
export interface RenderOptions extends Pick<ChannelDeps, 'commandConfigFile' | 'links' | 'consoleUrl' | 'templates'> {
  /** Now, in ms since the epoch, for "2h ago". */
  now: number;
  /** The channel's name (`{{channel}}` in a template). */
  channelName: string;
}
