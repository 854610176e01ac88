/**
 * Discord's living message: one message per alert group and channel, edited in place as its alerts
 * change, as the Slack app channel keeps one (`slack-app-sender.ts`), and in the same table
 * (`slack-app-link-store.ts`: the message's id where Slack keeps a `ts`, the webhook's id where
 * Slack keeps a channel ID). A webhook may edit what it posted: the first post asks `?wait=true`,
 * whose answer is the message with its `id`, and every later delivery of the group edits it
 * (`PATCH /webhooks/{id}/{token}/messages/{message_id}`) with the group as it now stands.
 *
 * Discord tells nobody of an edit, so news is also said in a short new message of its headline
 * alone: a new alert of the group, a repeat, a rise in severity and the end. Alertmanager
 * (`send_resolved`) and Grafana OnCall tell the channel when an alert resolves, and on-call people
 * expect to be told; an acknowledgement is not news to them (the person who took it knows): it
 * edits only. A folded alert's end is not news either: another carries its problem on.
 *
 * What a webhook cannot do, the message cannot: a webhook reads no history, so a post cut short by
 * a crash before its id was kept, or whose answer never came, cannot be found again; the next
 * delivery posts a new one and the log says a duplicate may exist. A message deleted in Discord (404 on the edit) is replaced by a
 * new one showing the group, and the link follows it.
 */
import { randomUUID } from 'node:crypto';
import type { AlertEventKind } from '../../alerts/alert-event.js';
import { FOLDED_REASON } from '../../alerts/decide.js';
import { groupMessage } from '../grouping.js';
import type { AlertsNotification, SendResult } from './channel.js';
import type { DiscordMessage } from './discord-message.js';
import type { LivingMessage, SlackAppLinkStore } from './slack-app-link-store.js';
import type { LivingMessagesOptions } from './slack-app-sender.js';
import { allResolved, livingDelivery, stateAfter, type LivingDelivery, type LivingState } from './slack-app-render.js';

/** What the living message needs of a delivery besides the message rendered alone. */
export interface DiscordLivingPart extends LivingDelivery {
  /** The short new message that says the news when the living message is edited; null when it is not news. */
  news: DiscordMessage | null;
}

/** What the Discord channel delivers: the message as it stands alone, and, where a state keeps living messages, its group. */
export type DiscordDelivery = DiscordMessage & { living?: DiscordLivingPart };

/** The kinds of event that are news to the channel (an edit alone would tell nobody). */
const NEWS: ReadonlySet<AlertEventKind> = new Set(['firing', 'repeat', 'escalated', 'resolved']);

/**
 * The living part of a delivery: its group, and as news the message's first line (its headline,
 * with the mentions it allows) when an event is news.
 */
export function discordLivingPart(n: AlertsNotification, message: DiscordMessage): DiscordLivingPart {
  const isNews = n.events.some((e) => NEWS.has(e.kind) && !(e.kind === 'resolved' && e.reason === FOLDED_REASON));
  const { content, embeds: _embeds, ...sender } = message;
  const headline = content.split('\n')[0] ?? '';
  // As the message is sent (its mentions, name and avatar), without its embeds.
  const news: DiscordMessage | null = isNews && headline !== '' ? { content: headline, embeds: [], ...sender } : null;
  return { ...livingDelivery(n), news };
}

/** What {@link DiscordLiving} is given by the channel. */
export interface DiscordLivingOptions extends Pick<LivingMessagesOptions, 'name' | 'clock' | 'log'> {
  /** The webhook's id (its URL's, not a credential): a message posted through another webhook cannot be edited through this one. */
  webhookId: string;
  links: SlackAppLinkStore;
  /** Renders a group's message at the moment of sending. */
  render: (n: AlertsNotification) => DiscordMessage;
  /** Posts a message; with `wait`, answers its id when Discord's answer held one. */
  post: (message: DiscordMessage, wait: boolean, signal: AbortSignal | undefined) => Promise<PostOutcome>;
  /** Edits a posted message; `gone` when Discord no longer has it (404). */
  edit: (id: string, message: DiscordMessage, signal: AbortSignal | undefined) => Promise<SendResult | 'gone'>;
}

/** A post's outcome and, when asked with `wait` and answered, the message's id. */
export interface PostOutcome {
  result: SendResult;
  id?: string | undefined;
  /** Sent, and no answer came (a timeout, a reset): Discord may have the message. */
  unanswered?: boolean | undefined;
}

/** The living messages of one Discord channel. */
export class DiscordLiving {
  /** One delivery after another, so two never read and write the same message's state at once. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: DiscordLivingOptions) {}

  /** Delivers one rendered notification: a post, or an edit of its group's message and the news. Never throws for Discord's answers. */
  deliver(delivery: DiscordDelivery, signal?: AbortSignal): Promise<SendResult> {
    const run = this.#queue.then(() => this.#deliver(delivery, signal));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #deliver({ living, ...message }: DiscordDelivery, signal: AbortSignal | undefined): Promise<SendResult> {
    if (!living) return (await this.o.post(message, false, signal)).result;
    const link = this.#usable(this.o.links.living(this.o.name, living.groupKey));
    const state = stateAfter(link, living);
    const whole = this.o.render(groupMessage(state, Infinity));
    if (link) {
      const edited = await this.o.edit(link.ts!, whole, signal);
      if (edited === 'gone') {
        this.o.log.warn(
          { group: living.groupKey, message: link.ts },
          'the living message is gone from Discord; posting a new one in its place',
        );
        // Its link follows the new one: a refused post leaves it, with the group's alerts, for the retry.
        return this.#postLiving(living.groupKey, state, whole, signal, link);
      } else if (edited.outcome !== 'ok') {
        return edited;
      }
    }
    if (!link) return this.#postLiving(living.groupKey, state, whole, signal);
    if (signal?.aborted) return { outcome: 'retryable', reason: 'stopped before the news was posted' };
    // Kept only once the news is out: a retry edits again (the same state: idempotent) and posts it.
    if (living.news) {
      const { result } = await this.o.post(living.news, false, signal);
      if (result.outcome !== 'ok') return result;
    }
    this.#keep(link.id, state);
    return { outcome: 'ok' };
  }

  /** The group's open message if it can be edited here; one that cannot is closed, with the reason logged. */
  #usable(link: LivingMessage | undefined): LivingMessage | undefined {
    if (!link) return undefined;
    if (link.status === 'open' && link.ts && link.slackChannel === this.o.webhookId) return link;
    const now = this.o.clock.now();
    if (link.status === 'posting') {
      this.o.links.close(link.id, 'its post was cut short before its id was kept', now);
      this.o.log.warn(
        { group: link.groupKey },
        'the living message posted before a restart cannot be found (a webhook reads no history); posting it again, so one duplicate may exist',
      );
    } else {
      this.o.links.close(link.id, 'the channel now posts through another webhook', now);
    }
    return undefined;
  }

  /**
   * Posts a group's new living message and keeps its id; the intent committed first, dropped when
   * Discord refuses it, closed (said at warn) when no answer came. In place of a message `gone`
   * from Discord, its link is the intent, left as it is until the post is answered.
   */
  async #postLiving(
    groupKey: string,
    state: LivingState,
    whole: DiscordMessage,
    signal: AbortSignal | undefined,
    gone?: LivingMessage,
  ): Promise<SendResult> {
    const { links, clock } = this.o;
    const intent = gone ?? links.intend(this.o.name, groupKey, this.o.webhookId, randomUUID(), clock.now());
    const { result, id, unanswered } = await this.o.post(whole, true, signal);
    if (result.outcome !== 'ok') {
      // Refused: nothing was posted. No answer: Discord may have it, and a webhook cannot look for
      // it, so the next delivery posts a new one.
      if (!unanswered) {
        if (!gone) links.forget(intent.id);
      } else {
        if (!gone) links.close(intent.id, 'no answer came to its post', clock.now());
        this.o.log.warn(
          { group: groupKey, reason: result.reason },
          "no answer came to the living message's post; the next delivery posts it again, so one duplicate may exist",
        );
      }
      return result;
    }
    if (id === undefined) {
      links.close(intent.id, "Discord's answer held no message id", clock.now());
      this.o.log.warn({ group: groupKey }, "Discord's answer held no message id: this message will not be edited");
      return result;
    }
    links.posted(intent.id, this.o.webhookId, id, clock.now());
    this.#keep(intent.id, state);
    return result;
  }

  /** What the message now shows; closed once every alert in it resolved (the group's next event starts a new one). */
  #keep(id: number, state: LivingState): void {
    const now = this.o.clock.now();
    this.o.links.save(id, state, now);
    if (allResolved(state.alerts)) this.o.links.close(id, 'every alert in it resolved', now);
  }
}
