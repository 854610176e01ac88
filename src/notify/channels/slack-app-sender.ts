/**
 * How the Slack app channel keeps one living message per alert group (`LivingMessages`): the first
 * delivery of a group posts it (`chat.postMessage`); every later one updates it in place
 * (`chat.update`: header, colour, the alerts still open, the resolved ones marked) and says the
 * delivery's events in its thread (`thread_ts`), so its history stays readable. When every alert in
 * it has resolved, it closes, and the group's next event starts a new one.
 *
 * Alertmanager 0.32 (`update_message`, prometheus/alertmanager#5007) keeps the `ts` and channel of
 * a group's message in the group's notification-log entry (`notify/slack/slack.go`: read back as
 * `threadTs`/`channelId`, then `chat.update` instead of `chat.postMessage`), written only after a
 * successful send: a crash between Slack's answer and that write posts a second message, and a
 * deleted message fails every update until the entry expires. Here the link is in the state, and:
 * - **A crash between the post and keeping its `ts`** (kill -9): the intent is committed before the
 *   post (`posting`, with a random token that the post carries in its `metadata`). The next send of
 *   the group finds the intent, looks for the token in the channel's history since then
 *   (`conversations.history`, `include_all_metadata`) and adopts the message it finds; found
 *   nowhere, the post never arrived and is made now. Only when the history cannot be read (no
 *   `channels:history` scope) is it posted without knowing, and the log says one duplicate may
 *   exist: at most one extra message per crash, adopted or said.
 * - **The message gone** (deleted in Slack, or no longer editable): a new living message is posted
 *   with the group's state and the link follows it.
 * - **A retry after a partial success** (updated, then the thread reply rate limited): the update
 *   is made again with the same content (the shown state merges by event id, so it is idempotent)
 *   and the reply is sent; as with every channel, a crash after Slack's answer and before the row
 *   is marked sends that delivery once more.
 */
import { randomUUID } from 'node:crypto';
import { SLACK_ERROR } from './slack-web-api-words.js';
import { z } from 'zod';
import type { AlertEvent } from '../../alerts/alert-event.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { SendResult } from './channel.js';
import { PASSING_SLACK_ERRORS, slackErrorWord } from './slack-app-classify.js';
import type { LivingMessage, SlackAppLinkStore } from './slack-app-link-store.js';
import { allResolved, renderLiving, stateAfter, type LivingState, type SlackAppMessage } from './slack-app-render.js';
import type { LivingDelivery } from './slack-app-render.js';
import type { EventControls, SlackMessage, SlackRenderOptions } from './slack-render.js';

/** The `event_type` of the metadata a living message carries (Slack wants a short snake_case word). */
export const LIVING_EVENT_TYPE = 'deploy_watchdog_alert_group';

/** Error words of `chat.update` that mean the message can no longer be updated: a new one replaces it. */
const GONE = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed']);
/** A Slack channel's refusals: for a message left in one the config moved away from, that message's alone. */
const CHANNEL_GONE = new Set(['channel_not_found', 'not_in_channel', 'is_archived']);

/** How far back before its intent a message is looked for (Slack's clock and ours may differ a little). */
const FIND_SKEW_MS = 5 * 60_000;
/** Pages of history read at most when looking for a message posted before a crash. */
export const FIND_PAGES = 3;
const FIND_PAGE_SIZE = 200;

/** The most Web API calls one send makes: history pages, the post, and its thread reply. */
export const MAX_CALLS_PER_SEND = FIND_PAGES + 2;

/** One Web API call: its method and arguments; answers the parsed body, throws @slack/web-api's errors. */
export type SlackCall = (method: string, args: Record<string, unknown>) => Promise<unknown>;

/** Slack's answer did not hold what the call needs (a `ts`): not the message's fault, so retried. */
export class SlackAnswerError extends Error {
  override readonly name = 'SlackAnswerError';
}

const postAnswer = z.object({ channel: z.string().min(1), ts: z.string().min(1) });
const historyAnswer = z.object({
  messages: z
    .array(
      z.object({
        ts: z.string(),
        metadata: z
          .object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() })
          .optional(),
      }),
    )
    .default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

/** A delivery of an alert group's events, as rendered for the channel. */
export interface AlertsDelivery extends LivingDelivery {
  type: 'alerts';
  /** The delivery's events as the thread reply says them. */
  reply: SlackMessage;
  /** Whether the reply is also shown in the channel (an event kind of `broadcast`). */
  broadcast: boolean;
}

/** A notice, as rendered for the channel: said in its alert's living message when it has one. */
export interface NoticeDelivery {
  type: 'notice';
  /** The alert it is about; undefined: it stands alone. */
  fingerprint: string | undefined;
  /** The line the living message keeps of it. */
  note: string;
  reply: SlackMessage;
  /** Said only in its alert's living message; nothing when none shows it (`NoticeNotification.threadOnly`). */
  threadOnly?: boolean;
}

/** What the Slack app channel renders. */
export type SlackAppDelivery = AlertsDelivery | NoticeDelivery;

/** What {@link LivingMessages} works with. */
export interface LivingMessagesOptions {
  /** The channel's name in `notify.channels`. */
  name: string;
  /** The Slack channel ID of the config. */
  slackChannel: string;
  call: SlackCall;
  /** The state; undefined (`notify-test`): nothing is kept and every message stands alone. */
  links: SlackAppLinkStore | undefined;
  clock: Clock;
  log: Logger;
  maxItems: number;
  renderOptions: () => SlackRenderOptions;
  /** What a person can do about each alert a living message shows (its buttons); absent: nothing but read. */
  controls?: ((alerts: readonly AlertEvent[]) => ReadonlyMap<string, EventControls>) | undefined;
}

/** What a living message found by its `ts` is about. */
export interface LivingMessageView {
  /** False once every alert in it resolved (or it was replaced): an action on it comes too late. */
  open: boolean;
  /** The alerts it shows. */
  fingerprints: string[];
}

/** The living messages of one Slack app channel. */
export class LivingMessages {
  /** Sends and refreshes one after another, so two never read and write the same message's state at once. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Messages this process posted whose first thread reply has not gone yet (a 429 between the two). */
  readonly #postedUnreplied = new Set<number>();
  /** Groups whose message is gone from Slack and whose new one a refused post left unposted: what it is to show. */
  readonly #replacing = new Map<string, LivingState>();

  constructor(private readonly o: LivingMessagesOptions) {}

  /** Delivers one rendered notification. Throws the Web API's errors (the channel classifies them). */
  deliver(delivery: SlackAppDelivery, signal?: AbortSignal): Promise<SendResult> {
    return this.#exclusive(() =>
      delivery.type === 'alerts' ? this.#alerts(delivery, signal) : this.#notice(delivery, signal),
    );
  }

  /** What the message Slack knows as (channel ID, ts) is, if it is one of this channel's living messages. */
  messageAt(slackChannel: string, ts: string): LivingMessageView | undefined {
    const link = this.o.links?.byMessage(slackChannel, ts);
    if (!link || link.channel !== this.o.name) return undefined;
    return {
      open: link.status === 'open',
      fingerprints: link.alerts.map((e) => e.fingerprint),
    };
  }

  /**
   * Renders an alert's living message again from the state, with `note` added when given (what was
   * just done about it, and by whom), and updates it in Slack. Permanent when no message shows the
   * alert. Throws the Web API's errors.
   */
  refresh(fingerprint: string, note?: string): Promise<SendResult> {
    return this.#exclusive(async () => {
      const link = this.o.links?.forAlert(this.o.name, fingerprint);
      if (!link) return { outcome: 'permanent', reason: 'no living message shows this alert' };
      // Kept before Slack is asked: an update refused or rate limited leaves it for the next to show.
      const noted = note === undefined ? link : { ...link, notes: [...link.notes, note] };
      if (note !== undefined) this.o.links!.save(link.id, noted, this.o.clock.now());
      const shown = await this.#showAgain(noted, undefined);
      return shown ? { outcome: 'ok' } : { outcome: 'permanent', reason: 'its message is gone from Slack' };
    });
  }

  async #alerts(d: AlertsDelivery, signal: AbortSignal | undefined): Promise<SendResult> {
    const links = this.o.links;
    if (!links) {
      await this.#post(d.reply, {});
      return { outcome: 'ok' };
    }
    let link = links.living(this.o.name, d.groupKey);
    if (link && link.slackChannel !== this.o.slackChannel) {
      // The config moved the channel: the message in the old one is left as it is.
      links.close(link.id, `the channel is now ${this.o.slackChannel}`, this.o.clock.now());
      link = undefined;
    }
    // A post a crash cut short: once adopted, it was this news's first post all the same.
    const cutShort = link?.status === 'posting' ? link : undefined;
    if (cutShort) link = await this.#adopt(cutShort);
    // A refused post forgets its intent: the state of the message it replaces is kept here instead.
    const state = stateAfter(link ?? this.#replacing.get(d.groupKey), d);
    const shown = await this.#show(link, state, d.groupKey);
    if (signal?.aborted) return { outcome: 'retryable', reason: 'stopped before the thread reply' };
    // The first post is the news itself (its reply retried after a 429 too); a later one is said
    // in the channel only where configured.
    if (shown.posted) this.#postedUnreplied.add(shown.link.id);
    const broadcast = d.broadcast && !cutShort && !this.#postedUnreplied.has(shown.link.id);
    await this.#post(d.reply, { thread: shown.link, broadcast });
    this.#postedUnreplied.delete(shown.link.id);
    if (allResolved(state.alerts)) links.close(shown.link.id, 'every alert in it resolved', this.o.clock.now());
    return { outcome: 'ok' };
  }

  async #notice(d: NoticeDelivery, signal: AbortSignal | undefined): Promise<SendResult> {
    const link = d.fingerprint === undefined ? undefined : this.o.links?.forAlert(this.o.name, d.fingerprint);
    const shown = link && (await this.#showAgain(link, d.note));
    if (signal?.aborted) return { outcome: 'retryable', reason: 'stopped before the thread reply' };
    // Only news where its alert's message is: without one, a line alone would read as a new alert.
    if (!shown && d.threadOnly) return { outcome: 'ok' };
    // About no alert, or its message gone: it stands alone.
    await this.#post(d.reply, shown ? { thread: shown } : {});
    return { outcome: 'ok' };
  }

  /**
   * Shows an alert's message again from the state, with a note kept on it: an open one as any
   * update (replaced when gone); a closed one updated where it is (nothing to replace: its alerts
   * are over). Answers where it is, or undefined when a closed one is gone.
   */
  async #showAgain(link: LivingMessage, note: string | undefined): Promise<LivingMessage | undefined> {
    // A note already the latest is this notice's own, shown before its thread reply failed: once.
    const kept = note === undefined || link.notes.at(-1) === note;
    const state = { ...link, notes: kept ? link.notes : [...link.notes, note] };
    if (link.status === 'open') return (await this.#show(link, state)).link;
    const message = this.#render(state);
    if (!link.ts || (await this.#update(link.slackChannel, link.ts, message))) return undefined;
    this.o.links!.save(link.id, state, this.o.clock.now());
    return link;
  }

  /**
   * Shows a group's state in its living message: an update of the open one, or a post of a new one
   * (none yet, an intent whose post never arrived, or a message gone from Slack); the state kept
   * once Slack has it.
   */
  async #show(
    link: LivingMessage | undefined,
    state: LivingState,
    groupKey = link?.groupKey ?? '',
  ): Promise<{ link: LivingMessage; posted: boolean }> {
    const links = this.o.links!;
    const message = this.#render(state);
    let open = link;
    if (open?.status === 'open' && open.ts) {
      const gone = await this.#update(open.slackChannel, open.ts, message);
      if (gone) {
        links.close(open.id, `its message can no longer be updated (${gone})`, this.o.clock.now());
        this.o.log.warn(
          { group: groupKey, ts: open.ts, error: gone },
          'the living message can no longer be updated in Slack; posting a new one in its place',
        );
        open = undefined;
        this.#replacing.set(groupKey, state);
      }
    }
    let posted = false;
    if (open?.status !== 'open') {
      open = await this.#postLiving(
        open ?? links.intend(this.o.name, groupKey, this.o.slackChannel, randomUUID(), this.o.clock.now()),
        message,
      );
      this.#replacing.delete(groupKey);
      posted = true;
    }
    links.save(open.id, state, this.o.clock.now());
    return { link: open, posted };
  }

  /**
   * After a crash between posting a living message and keeping its `ts`: finds the message by the
   * intent's token and adopts it; answers the intent itself (to be posted) when it never arrived or
   * cannot be found. A retryable failure of the search is thrown: the send is tried again later.
   */
  async #adopt(intent: LivingMessage): Promise<LivingMessage> {
    const log = this.o.log.child({ group: intent.groupKey });
    const found = await this.#find(intent);
    if (found.ts) {
      this.o.links!.posted(intent.id, intent.slackChannel, found.ts, this.o.clock.now());
      log.info({ ts: found.ts }, 'adopted the living message posted before a restart (its ts was not kept)');
      return { ...intent, status: 'open', ts: found.ts };
    }
    if (found.unknown) {
      log.warn(
        { reason: found.unknown },
        'cannot tell whether the living message posted before a restart reached Slack; posting it again, so one duplicate may exist (the app needs channels:history, or groups:history for a private channel, to find it)',
      );
    } else {
      log.info('the living message whose post was cut short never reached Slack; posting it');
    }
    return intent;
  }

  /** Looks for the intent's message in the channel's history since the intent was written. */
  async #find(intent: LivingMessage): Promise<{ ts?: string; unknown?: string }> {
    let cursor: string | undefined;
    for (let page = 0; page < FIND_PAGES; page++) {
      let answer: z.infer<typeof historyAnswer>;
      try {
        answer = historyAnswer.parse(
          await this.o.call('conversations.history', {
            channel: intent.slackChannel,
            oldest: ((intent.createdAt - FIND_SKEW_MS) / 1000).toFixed(6),
            limit: FIND_PAGE_SIZE,
            include_all_metadata: true,
            ...(cursor ? { cursor } : {}),
          }),
        );
      } catch (err) {
        const word = slackErrorWord(err);
        // A refusal that stays (no scope, not a member): say so and post. Anything else may pass.
        if (word && !PASSING_SLACK_ERRORS.has(word)) return { unknown: `conversations.history answered ${word}` };
        throw err;
      }
      const mine = answer.messages.find(
        (m) => m.metadata?.event_type === LIVING_EVENT_TYPE && m.metadata.event_payload?.token === intent.token,
      );
      if (mine) return { ts: mine.ts };
      cursor = answer.response_metadata?.next_cursor || undefined;
      if (!cursor) return {};
    }
    return { unknown: `not among the ${FIND_PAGES * FIND_PAGE_SIZE} newest messages since it was posted` };
  }

  /** Posts a living message for its intent and keeps where it is. */
  async #postLiving(intent: LivingMessage, message: SlackAppMessage): Promise<LivingMessage> {
    let answer: z.infer<typeof postAnswer>;
    try {
      answer = await this.#post(message, {
        metadata: { event_type: LIVING_EVENT_TYPE, event_payload: { token: intent.token, channel: this.o.name } },
        to: intent.slackChannel,
      });
    } catch (err) {
      // Refused (an error word, a rate limit): nothing was posted, so there is nothing to look
      // for. No answer (a timeout, a reset): it may have been, and the intent stays to find it.
      if (refused(err)) this.o.links!.forget(intent.id);
      throw err;
    }
    this.o.links!.posted(intent.id, answer.channel, answer.ts, this.o.clock.now());
    return { ...intent, status: 'open', slackChannel: answer.channel, ts: answer.ts };
  }

  /** Updates a message in place; answers the error word when it can no longer be updated. */
  async #update(channel: string, ts: string, message: SlackAppMessage): Promise<string | null> {
    try {
      await this.o.call('chat.update', { channel, ts, ...content(message) });
      return null;
    } catch (err) {
      const word = slackErrorWord(err);
      if (word && (GONE.has(word) || (channel !== this.o.slackChannel && CHANNEL_GONE.has(word)))) return word;
      throw err;
    }
  }

  /** Posts a message: alone, or as a reply in a living message's thread. */
  async #post(
    message: SlackAppMessage,
    where: { thread?: LivingMessage; broadcast?: boolean; metadata?: unknown; to?: string },
  ): Promise<z.infer<typeof postAnswer>> {
    const answer = postAnswer.safeParse(
      await this.o.call('chat.postMessage', {
        channel: where.thread?.slackChannel ?? where.to ?? this.o.slackChannel,
        ...content(message),
        ...(where.thread?.ts ? { thread_ts: where.thread.ts } : {}),
        ...(where.broadcast ? { reply_broadcast: true } : {}),
        ...(where.metadata ? { metadata: where.metadata } : {}),
        // Links to the platform's pages would otherwise each grow a preview.
        unfurl_links: false,
        unfurl_media: false,
      }),
    );
    if (!answer.success) throw new SlackAnswerError("Slack's answer to chat.postMessage named no channel and ts");
    return answer.data;
  }

  /** The living message of a state, with what can be done about each of its alerts. */
  #render(state: LivingState): SlackAppMessage {
    return renderLiving(state, this.o.maxItems, {
      ...this.o.renderOptions(),
      controls: this.o.controls?.(state.alerts),
    });
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

/** Whether a failed call was refused by Slack, so that it certainly did nothing. */
function refused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === SLACK_ERROR.PlatformError || code === SLACK_ERROR.RateLimitedError;
}

/** The parts of a message a post or an update carries. */
function content(message: SlackAppMessage): Record<string, unknown> {
  return {
    text: message.text,
    blocks: message.blocks,
    ...(message.attachments ? { attachments: message.attachments } : {}),
  };
}
