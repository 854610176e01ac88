/**
 * The Slack app channel's buttons, end to end: received (over Socket Mode, or over HTTP with the
 * signing secret checked, as each channel's `interactions.mode` says), acknowledged to Slack at
 * once, then acted on apart from the receiving:
 *
 * 1. The click is read (`slack-click.ts`); anything that is not one of our buttons is ignored.
 * 2. The message clicked is found among the living messages of the channels of the app that sent
 *    it (`livingMessageAt`), and the alert among those it shows, by the short id the button
 *    carried. A message not ours, an alert no longer in it, or a message closed (every alert in it
 *    over) is a stale click: answered politely, nothing changed.
 * 3. Who clicked is checked against the channel's `interactions.allow` (`slack-permissions.ts`);
 *    a refusal is answered politely, nothing changed.
 * 4. The action is carried out through the same modules as the console's and the CLI's
 *    (`slack-actions.ts`); what it did is said on the living message (`refresh` with a note: what,
 *    and by whom).
 * 5. Every click, whatever came of it, is written to the audit (`interaction-audit-store.ts`, shown in the
 *    console's alert timeline) and the daemon's log, and the person who clicked is answered where
 *    only they see it (`slack-responder.ts`).
 *
 * No token, secret or response URL reaches a log line, a row or an answer.
 */
import { alertId } from '../alerts/alert-id.js';
import type { Clock } from '../lib/clock.js';
import { FencedError } from '../state/fenced-error.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import type { Channel } from '../notify/channels/channel.js';
import type { ChannelConfig } from '../notify/channels/registry.js';
import type { ButtonAction } from '../notify/channels/slack-app-buttons.js';
import type { SlackAppChannel } from '../notify/channels/slack-app.js';
import type { SlackAppConfig } from '../notify/channels/slack-app-config.js';
import type { SlackInteractionsConfig, SlackPermission } from '../notify/channels/slack-interactions-config.js';
import { recordInteraction } from './interaction-audit-store.js';
import { runAction, type ActionDeps, type ActionResult } from './slack-actions.js';
import { actorLabel, clickOf, unknownButtonResponseUrl, type SlackClick } from './slack-click.js';
import type { Secret } from '../lib/secret.js';
import type { InteractionsTaker } from './slack-http-receiver.js';
import { SlackPermissions, type PermissionDecision } from './slack-permissions.js';
import { SlackResponder } from './slack-responder.js';
import { SocketModeThread, type SocketModeLink } from './socket-mode-thread.js';

/** The permission each action needs. */
const PERMISSION_OF: Readonly<Record<ButtonAction, SlackPermission>> = {
  acknowledge: 'acknowledge',
  unacknowledge: 'acknowledge',
  silence_1h: 'silence',
  silence_4h: 'silence',
  remediate: 'remediate',
};

/** What each permission lets a person do, in words. */
const PERMISSION_WORDS: Readonly<Record<SlackPermission, string>> = {
  acknowledge: 'acknowledge alerts',
  silence: 'silence alerts',
  remediate: 'ask for a remediation',
};

/** What a stale click is told: on a message not ours, an alert no longer in it, a message over. */
const STALE = {
  not_ours: 'This message is not one deploy-watchdog keeps up to date (any more): nothing changed.',
  gone: 'That alert is no longer in this message: nothing changed.',
  over: 'This message is over (every alert in it has resolved, or a newer message took its place): nothing changed.',
} as const;

/** What a click that comes while its runtime stops (a restart, a reload) is told. */
const STOPPING =
  'deploy-watchdog is stopping or reloading its config: nothing changed. Try again in a minute, or use the console.';

/** What a click on a button whose value this version never made is told. */
const UNKNOWN_BUTTON =
  'That button is not one this deploy-watchdog knows (from an older version, or changed): nothing changed. Use the buttons of the message as it is now, or the console.';

/** A Slack app channel that takes clicks: its config (with `interactions`), the channel, and who may click. */
interface Receiving {
  config: SlackAppConfig & { interactions: SlackInteractionsConfig };
  channel: SlackAppChannel;
  permissions: SlackPermissions;
}

/** What the interactions are built from: one running configuration's parts, the buttons' actions' among them. */
export interface SlackInteractionsParts extends Omit<ActionDeps, 'log'> {
  configs: readonly ChannelConfig[];
  channels: ReadonlyMap<string, Channel>;
  clock: Clock;
  logger: Logger;
}

/** The interactions of a configuration, or undefined when no Slack app channel has `interactions`. */
export function createSlackInteractions(parts: SlackInteractionsParts): SlackInteractions | undefined {
  const receiving: Receiving[] = [];
  for (const config of parts.configs) {
    if (config.type !== 'slack_app' || !config.interactions) continue;
    const channel = parts.channels.get(config.name) as SlackAppChannel | undefined;
    if (!channel) continue;
    const { interactions } = config;
    receiving.push({
      config: { ...config, interactions },
      channel,
      permissions: new SlackPermissions({
        allow: interactions.allow,
        cacheMs: interactions.usergroup_cache,
        members: (usergroup) => channel.usergroupMembers(usergroup),
        clock: parts.clock,
      }),
    });
  }
  return receiving.length === 0 ? undefined : new SlackInteractions(parts, receiving);
}

/** The receivers of one configuration's clicks, and what is done with them. */
export class SlackInteractions {
  /** What `POST /slack/interactions` hands its clicks to, when a channel takes them over HTTP. */
  readonly http: InteractionsTaker | undefined;
  /** Each app's Socket Mode connection, with what its clicks are handed to, on the daemon's Socket Mode thread. */
  readonly #sockets: { link: SocketModeLink; take: (payload: unknown) => void }[] = [];
  readonly #responder: SlackResponder;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #log: Logger;
  #stopped = false;

  constructor(
    private readonly parts: SlackInteractionsParts,
    receiving: readonly Receiving[],
  ) {
    this.#log = parts.logger.child({ stage: 'slack-interactions' });
    this.#responder = new SlackResponder(
      receiving.map((r) => r.config.api_url),
      Math.max(...receiving.map((r) => r.config.timeout)),
    );
    // One connection per app (its token); one secret per app: a click is looked for among the
    // messages of the channels of the app that sent it.
    const groups = new Map<string, Receiving[]>();
    for (const r of receiving) {
      const i = r.config.interactions;
      const key =
        i.mode === 'socket' ? `socket\n${i.app_token.reveal()}\n${r.config.api_url}` : i.signing_secret.reveal();
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    // Reserved now, when the runtime is built: a reload's new runtime keeps the old one's
    // connection when its app is the same (`socket-mode-thread.ts`).
    const thread = SocketModeThread.of(parts.store, this.#log);
    const http: { secret: Secret; group: Receiving[] }[] = [];
    for (const group of groups.values()) {
      const { interactions: i, api_url: apiUrl } = group[0]!.config;
      if (i.mode === 'http') http.push({ secret: i.signing_secret, group });
      else {
        const link = thread.reserve({ appToken: i.app_token, apiUrl, channels: group.map((r) => r.config.name) });
        this.#sockets.push({ link, take: (payload) => this.#receive(payload, group) });
      }
    }
    this.http =
      http.length === 0
        ? undefined
        : {
            secrets: http.map((h) => h.secret),
            take: (payload, secret) => {
              // Verified against the secrets of the config in force when it came: after a reload
              // that removed its app, nobody here takes it.
              const found = http.find((h) => h.secret === secret || h.secret.reveal() === secret.reveal());
              if (found) this.#receive(payload, found.group);
              else this.#log.warn('a Slack click came for an app no longer configured; nothing done');
            },
          };
  }

  /** Connects the Socket Mode receivers (in the background, on their own thread), and takes their clicks. */
  start(): void {
    for (const s of this.#sockets) s.link.start(s.take);
  }

  /** Stops receiving (the connections a next runtime does not hold are closed), then waits for the clicks being handled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#sockets.map((s) => s.link.release()));
    await Promise.all([...this.#inFlight]);
  }

  /** A payload received and acknowledged to Slack: handled apart, never throwing. */
  #receive(payload: unknown, from: readonly Receiving[]): void {
    const click = clickOf(payload);
    if (this.#stopped) {
      // Slack was answered already: without a word the button would seem to do nothing.
      if (!click) return;
      this.#log.info(
        { user: click.actor.id, action: click.action },
        'a Slack button click came while stopping or reloading: answered, nothing done',
      );
      void this.#responder.answer(click.responseUrl, STOPPING);
      return;
    }
    const unknown = click ? undefined : unknownButtonResponseUrl(payload);
    if (!click && !unknown) return;
    const work = (click ? this.#handle(click, from) : this.#answerUnknown(unknown)).catch((err: unknown) =>
      this.#log.error({ err: errorText(err) }, 'a Slack button click could not be handled'),
    );
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  async #handle(click: SlackClick, from: readonly Receiving[]): Promise<void> {
    const now = this.parts.clock.now();
    const who = actorLabel(click.actor);
    let where: Receiving | undefined;
    let fingerprint: string | null = null;
    let result: ActionResult;
    try {
      let open = false;
      for (const r of from) {
        const view = r.channel.livingMessageAt(click.slackChannel, click.ts);
        if (!view) continue;
        where = r;
        open = view.open;
        fingerprint = view.fingerprints.find((fp) => alertId(fp) === click.alertId) ?? null;
        break;
      }
      if (!where || fingerprint === null || !open) {
        result = { outcome: 'stale', text: STALE[!where ? 'not_ours' : fingerprint === null ? 'gone' : 'over'] };
      } else {
        const permission = PERMISSION_OF[click.action];
        const decision = await where.permissions.check(permission, click.actor.id);
        result = decision.allowed
          ? runAction(
              { ...this.parts, log: this.#log },
              click.action,
              fingerprint,
              { label: who, channel: where.config.name },
              now,
            )
          : { outcome: 'refused', text: refusalText(decision, permission, where.config.name), detail: decision.detail };
      }
    } catch (err) {
      // The action is one transaction: a failure wrote nothing. A replica that no longer leads
      // (handing over, or its lease lost) is no fault: another takes over within seconds, and the
      // audit's warning says it. Anything else is a fault of ours (the state busy, a disk full):
      // said, audited if it can be, never half-done.
      const fenced = err instanceof FencedError;
      if (!fenced)
        this.#log.error({ err: errorText(err), action: click.action, fingerprint }, 'a Slack button click failed');
      result = {
        outcome: 'failed',
        text: fenced
          ? `Nothing changed: this replica of deploy-watchdog no longer leads (${err.reason}). Try again in a few seconds.`
          : "Something went wrong on deploy-watchdog's side: nothing may have changed. Try again, or use the console; its log says what failed.",
      };
    }
    this.#audit(click, where?.config.name ?? '', fingerprint, result, now);
    // Told at once: the update of the living message may wait on Slack, or on a send before it.
    const answering = this.#responder.answer(click.responseUrl, result.text);
    if (result.note && where && fingerprint) {
      const shown = await where.channel.refresh(fingerprint, result.note);
      if (shown.outcome !== 'ok') {
        this.#log.warn(
          { channel: where.config.name, fingerprint, reason: shown.reason },
          'cannot show the click on the living message',
        );
      }
    }
    const answered = await answering;
    if (!answered.ok) this.#log.warn({ reason: answered.reason }, 'cannot answer the person who clicked');
  }

  /** A click on a button whose value this version did not make: nothing done, and said. */
  async #answerUnknown(responseUrl: string | undefined): Promise<void> {
    this.#log.warn('a Slack button click handed back a value this version never made; answered, nothing done');
    const answered = await this.#responder.answer(responseUrl, UNKNOWN_BUTTON);
    if (!answered.ok) this.#log.warn({ reason: answered.reason }, 'cannot answer the person who clicked');
  }

  /** The audit row and the log line of a click. */
  #audit(click: SlackClick, channel: string, fingerprint: string | null, result: ActionResult, now: number): void {
    const { outcome } = result;
    const detail = result.detail ? `${result.text} (${result.detail})` : result.text;
    const fields = { channel, user: click.actor.id, action: click.action, fingerprint, outcome };
    if (outcome === 'refused' || outcome === 'failed')
      this.#log.warn(fields, `Slack button click ${outcome}: ${detail}`);
    else this.#log.info(fields, `Slack button click: ${detail}`);
    try {
      recordInteraction(this.parts.store, {
        at: now,
        channel,
        slackUser: click.actor.id,
        userName: click.actor.name,
        action: click.action,
        fingerprint,
        outcome,
        detail,
      });
    } catch (err) {
      if (err instanceof FencedError)
        this.#log.warn(
          { reason: err.reason, ...fields },
          'Slack button click not audited: this replica no longer leads',
        );
      else this.#log.error({ err: errorText(err), ...fields }, 'cannot write the audit of a Slack button click');
    }
  }
}

/** What a person refused is told: politely, and where the rule is. */
function refusalText(
  decision: Extract<PermissionDecision, { allowed: false }>,
  what: SlackPermission,
  channel: string,
): string {
  const where = `notify.channels ${channel}, interactions.allow.${what}`;
  switch (decision.reason) {
    case 'nobody':
      return `Nobody may ${PERMISSION_WORDS[what]} from Slack here (${where}): nothing changed.`;
    case 'not_listed':
      return `Sorry: to ${PERMISSION_WORDS[what]} from Slack here you need to be named in deploy-watchdog's config (${where}), and you are not. Nothing changed.`;
    case 'lookup_failed':
      return `deploy-watchdog could not check whether you may ${PERMISSION_WORDS[what]} (it could not read a user group from Slack): nothing changed. Try again, or use the console.`;
  }
}
