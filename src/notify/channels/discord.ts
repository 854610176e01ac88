/**
 * Discord (`type: discord`): a channel's webhook, one living message per alert group, edited in place
 * as its alerts are acknowledged, rise and end (`discord-living.ts`), the headline in its
 * content and one embed per event (its colour, status, summary, facts, context and links), within
 * Discord's limits (10 embeds, 6,000 characters of embed text in all, a title 256, a description
 * 4,096, content 2,000).
 *
 * Nobody is pinged unless the config says so: `allowed_mentions` is always sent, empty by default,
 * and only the configured users and roles are allowed on a message with a firing critical alert.
 * Every piece of API text is escaped for Discord's markdown (`escapeDiscordMarkdown`: no
 * formatting, masked link, spoiler or mention can be formed from it), and links come from safe
 * http(s) URLs only.
 *
 * Rate limits are Discord's per-route buckets: each answer's `X-RateLimit-Remaining` and
 * `X-RateLimit-Reset-After` are read, and once the bucket is empty the next send does not go out
 * before its reset: it answers retryable with the wait, so the outbox pauses the channel. A 429's
 * `retry_after` (seconds, in its JSON body; else its Retry-After) is honoured the same way, on an
 * edit (PATCH) as on a post.
 */
import { Secret } from '../../lib/secret.js';
import type {
  AlertsNotification,
  Channel,
  ChannelKind,
  NoticeNotification,
  Notification,
  RenderOptions,
  SendResult,
} from './channel.js';
import { criticalNewsIn, MAX_RETRY_AFTER_MS, renderOptionsOf } from './channel.js';
import { eventFactList, TONES, type EventDescription, type Fact, type Tone } from './describe.js';
import { DISCORD_TEMPLATE_PARTS, discordConfigSchema, type DiscordConfig } from './discord-config.js';
import { cutText, escapeDiscordMarkdown, oneLine, safeHttpUrl } from './escape.js';
import { DiscordLiving, discordLivingPart, type DiscordDelivery, type PostOutcome } from './discord-living.js';
import type { AllowedMentions, DiscordEmbed, DiscordMessage } from './discord-message.js';
import { classifyHttpAnswer, headerOf } from './classify.js';
import { httpChannelIo, urlSecrets, type ChannelRequest, type HttpReply } from './http-post.js';
import { SlackAppLinkStore } from './slack-app-link-store.js';
import { consoleLink } from './console-link.js';
import { defaultTemplates } from './template-config.js';
import { describedAlerts, noticeTitle } from './template-view.js';
import { packLines, TextBudget } from './text-budget.js';

/** Discord's limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits). */
export const DISCORD_LIMITS = {
  content: 2000,
  embeds: 10,
  embedTotal: 6000,
  title: 256,
  description: 4096,
} as const;

/** An embed's colour by tone (the side bar). */
const COLOURS: Readonly<Record<Tone, number>> = {
  critical: 0xd00000,
  warning: 0xf2a900,
  info: 0x3b82f6,
  resolved: 0x36a64f,
  ok: 0x36a64f,
};

/**
 * What rendering needs besides the notification, the channel's mention, name and avatar as its
 * config gives them; absent templates: {@link DISCORD_TEMPLATES}.
 */
export type DiscordRenderOptions = RenderOptions & Partial<Pick<DiscordConfig, 'mention' | 'username' | 'avatar_url'>>;

/** `templates/discord/`: the built-in rendering's own templates. */
export const DISCORD_TEMPLATES = defaultTemplates('discord', DISCORD_TEMPLATE_PARTS);

/** Builds the webhook message for a notification. Pure. */
export function renderDiscord(n: Notification, o: DiscordRenderOptions): DiscordMessage {
  const message = n.type === 'notice' ? noticeMessage(n, o) : alertsMessage(n, o);
  if (o.username) message.username = o.username;
  if (o.avatar_url) message.avatar_url = o.avatar_url;
  return message;
}

function alertsMessage(n: AlertsNotification, o: DiscordRenderOptions): DiscordMessage {
  const { d, view, templates } = describedAlerts(n, o, DISCORD_TEMPLATES);
  const mentions = mentionsFor(n, o.mention);
  const tags = [...(mentions.users ?? []).map((id) => `<@${id}>`), ...(mentions.roles ?? []).map((id) => `<@&${id}>`)];
  const title = templates.title!.render([view], (v) => escapeDiscordMarkdown(v, 400));
  const lines = [`${tags.length > 0 ? `${tags.join(' ')} ` : ''}${title}`];
  if (d.shared.length > 0) lines.push(d.shared.map((f) => factText(f, 200)).join(' · '));

  const budget = new TextBudget(DISCORD_LIMITS.embedTotal);
  const footer = `deploy-watchdog · ${oneLine(o.channelName, 100)}`;
  budget.spend(footer);
  const embeds: DiscordEmbed[] = [];
  // Past the most embeds or the budget, every later event is left out too: the rest are counted.
  for (const [i, event] of n.events.entries()) {
    if (embeds.length === DISCORD_LIMITS.embeds || budget.left < 100) break;
    const lead = templates.text!.render([view, view.events[i]!], (v) => escapeDiscordMarkdown(v, 1_000));
    embeds.push(eventEmbed(d.events[i]!, lead, event.fingerprint, o, budget));
  }
  const more = d.omitted + n.events.length - embeds.length;
  if (more > 0) {
    const where = codeSpan(d.omittedCommand);
    lines.push(`…and ${more} more not shown${where ? `: ${where} lists every open alert` : ''}`);
  }
  for (const step of d.nextSteps) lines.push(`**Next step:** ${escapeDiscordMarkdown(step, 300)}`);
  const silence = codeSpan(d.silenceCommand);
  if (silence) lines.push(`To silence: ${silence}`);
  if (embeds.length > 0) embeds[embeds.length - 1]!.footer = { text: footer };
  return { content: packWhole(lines, DISCORD_LIMITS.content), embeds, allowed_mentions: mentions };
}

/**
 * One event's embed: its status and app as the title, linked to its page; its template's text
 * (`lead`: the summary), facts, context, links.
 */
function eventEmbed(
  e: EventDescription,
  lead: string,
  fingerprint: string,
  o: DiscordRenderOptions,
  budget: TextBudget,
): DiscordEmbed {
  // Cut to what is left too: an embed started with less left than a whole title must not pass the 6,000.
  const title =
    budget.take(
      (max) => `${TONES[e.tone].emoji} ${escapeDiscordMarkdown(`${e.status}${e.app ? ` · ${e.app}` : ''}`, max - 3)}`,
      DISCORD_LIMITS.title,
    ) ?? '';
  const parts: string[] = lead === '' ? [] : [cutText(lead, DISCORD_LIMITS.description)];
  for (const f of eventFactList(e)) parts.push(factText(f, 300));
  const log = e.context?.log;
  if (log) {
    parts.push(`**${escapeDiscordMarkdown(log.title, 200)}**`);
    for (const l of log.lines)
      parts.push(`> ${escapeDiscordMarkdown(l.stamp ? `${l.stamp}  ${l.text}` : l.text, 200)}`);
  }
  const links = [
    { label: 'Console', url: consoleLink(o.consoleUrl, fingerprint) },
    ...(e.page ? [e.page] : []),
    ...(e.app ? [{ label: 'App', url: e.url }] : []),
  ]
    .map((l) => markdownLink(l.label, l.url))
    .filter((l): l is string => l !== null);
  if (links.length > 0) parts.push(links.join(' · '));
  const description = budget.take((max) => packWhole(parts, max), DISCORD_LIMITS.description) ?? undefined;
  const url = safeHttpUrl(e.page?.url ?? e.url) ?? undefined;
  return { title, color: COLOURS[e.tone], ...(description ? { description } : {}), ...(url ? { url } : {}) };
}

/** `**Label:** value`, the label ours, the value API text escaped. */
function factText(f: Fact, max: number): string {
  return `**${escapeDiscordMarkdown(f.label, 60)}:** ${escapeDiscordMarkdown(f.value, max)}`;
}

/** A masked link `[label](url)` of a safe http(s) URL, its parentheses encoded so they cannot end it; null without one. */
function markdownLink(label: string, url: string | null | undefined): string | null {
  const safe = safeHttpUrl(url);
  return safe ? `[${escapeDiscordMarkdown(label, 60)}](${safe.replace(/\(/g, '%28').replace(/\)/g, '%29')})` : null;
}

/**
 * A shell line as an inline code span, which Discord shows as written (no markdown, no mention
 * inside it); null when there is none, or when it holds a backtick, which would end the span.
 */
function codeSpan(line: string | null): string | null {
  return line === null || line.includes('`') ? null : `\`${line}\``;
}

/** As many whole lines as fit in `max`; the first is cut if it alone does not. */
function packWhole(lines: readonly string[], max: number): string {
  return packLines(lines, max, (out, line) => out || cutText(line, max));
}

/** The users and roles a message may ping: the configured ones, on news of a critical alert in their environments. */
function mentionsFor(n: AlertsNotification, mention: DiscordConfig['mention']): AllowedMentions {
  if (!mention || !criticalNewsIn(n, mention.environment_types)) return { parse: [] };
  if (mention.users.length + mention.roles.length === 0) return { parse: [] };
  return { parse: [], users: [...mention.users], roles: [...mention.roles] };
}

function noticeMessage(n: NoticeNotification, o: DiscordRenderOptions): DiscordMessage {
  const title = noticeTitle(n, o, DISCORD_TEMPLATES, (v) => escapeDiscordMarkdown(v, 250));
  const lines = [
    ...(n.fields ?? []).map((f) => factText({ label: f.label, value: f.value }, 500)),
    ...(n.lines ?? []).map((l) => escapeDiscordMarkdown(l, 1_000)),
  ];
  // One embed: its title, this description and its footer stay well within Discord's 6,000 in all.
  const description = packWhole(lines, DISCORD_LIMITS.description);
  const url = safeHttpUrl(n.url) ?? undefined;
  const embed: DiscordEmbed = {
    title: cutText(title, DISCORD_LIMITS.title),
    color: COLOURS[n.severity ?? 'info'],
    ...(description ? { description } : {}),
    ...(url ? { url } : {}),
    footer: { text: `deploy-watchdog · ${oneLine(o.channelName, 100)}` },
  };
  return { content: '', embeds: [embed], allowed_mentions: { parse: [] } };
}

/**
 * The webhook's rate-limit bucket, as Discord's answers describe it: when it is empty, until
 * when. In memory: after a restart the first answer says again.
 */
export class DiscordRateLimit {
  #until = 0;
  #bucket: string | null = null;

  /** How long to wait before the next request (0: go), and why. */
  wait(now: number): { ms: number; reason: string } {
    const ms = Math.max(0, this.#until - now);
    return { ms, reason: `rate limit bucket ${this.#bucket ?? '(unnamed)'} is empty until its reset` };
  }

  /**
   * Reads an answer: its bucket, and when it is empty (no request left), when it resets; a 429's
   * wait. Answers the 429's SendResult, or null for any other answer.
   */
  observe(reply: HttpReply, now: number): SendResult | null {
    this.#bucket = headerOf(reply, 'x-ratelimit-bucket') ?? this.#bucket;
    const remaining = headerOf(reply, 'x-ratelimit-remaining');
    const resetAfter = seconds(headerOf(reply, 'x-ratelimit-reset-after'));
    if (remaining === '0' && resetAfter !== undefined) this.#until = Math.max(this.#until, now + resetAfter);
    if (reply.status !== 429) return null;
    const wait = Math.min(MAX_RETRY_AFTER_MS, retryAfterOf(reply) ?? resetAfter ?? 1_000);
    this.#until = Math.max(this.#until, now + wait);
    const scope = headerOf(reply, 'x-ratelimit-scope') ?? (headerOf(reply, 'x-ratelimit-global') ? 'global' : 'user');
    return {
      outcome: 'retryable',
      reason: `rate limited (HTTP 429, ${scope} limit${this.#bucket ? `, bucket ${oneLine(this.#bucket, 64)}` : ''})`,
      retryAfterMs: wait,
    };
  }
}

/** Seconds (a decimal, as Discord writes them) as ms; undefined when not a number. */
function seconds(value: string | number | null | undefined): number | undefined {
  const n = typeof value === 'number' ? value : value ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.ceil(n * 1000) : undefined;
}

/** A 429's wait: `retry_after` of its JSON body (seconds), else its Retry-After header. */
function retryAfterOf(reply: HttpReply): number | undefined {
  const inBody = bodyField(reply, 'retry_after');
  return seconds(typeof inBody === 'number' ? inBody : null) ?? seconds(headerOf(reply, 'retry-after'));
}

/** A field of an answer's JSON body; undefined when the body is not a JSON object (a proxy's page). */
function bodyField(reply: HttpReply, name: string): unknown {
  try {
    return (JSON.parse(reply.body) as Record<string, unknown> | null)?.[name];
  } catch {
    return undefined;
  }
}

/** The most a message Discord answers with `?wait=true` can take (its id comes after its embeds); the rest is not read. */
const MESSAGE_ANSWER_BYTES = 128 * 1024;

/** The id of the message in Discord's answer to a post with `?wait=true`; undefined when it holds none. */
function messageIdOf(reply: HttpReply): string | undefined {
  const id = bodyField(reply, 'id');
  return typeof id === 'string' && /^\d{1,25}$/.test(id) ? id : undefined;
}

/** What an edit may change: a webhook's name and avatar are set by its posts only. */
function editOf(m: DiscordMessage): Pick<DiscordMessage, 'content' | 'embeds' | 'allowed_mentions'> {
  return { content: m.content, embeds: m.embeds, allowed_mentions: m.allowed_mentions };
}

/** The Discord channel kind. */
export const discordChannel = {
  configSchema: discordConfigSchema,
  templateParts: DISCORD_TEMPLATE_PARTS,
  create(config, deps): Channel<DiscordDelivery> {
    const url = new URL(config.webhook_url.reveal());
    // The path is /api/webhooks/{id}/{token}: the token is the credential, scrubbed wherever it could be echoed.
    const [webhookId = '', token = ''] = url.pathname.split('/').filter(Boolean).slice(-2);
    const secrets = [...urlSecrets(config.webhook_url), new Secret(url.pathname), new Secret(token)];
    // One bucket for posts and edits: an empty one on either route holds both (Discord may share them).
    const limit = new DiscordRateLimit();
    const io = httpChannelIo(config, deps, 'Discord', secrets);

    /** A request's outcome (`unanswered`: Discord may have done it), and its answer when one came. */
    const call = async (request: ChannelRequest): Promise<Omit<PostOutcome, 'id'> & { reply?: HttpReply }> => {
      const waiting = limit.wait(deps.clock.now());
      if (waiting.ms > 0) return { result: { outcome: 'retryable', reason: waiting.reason, retryAfterMs: waiting.ms } };
      const reply = await io.postRaw(request);
      if ('failure' in reply) return { result: reply.failure, unanswered: reply.failure.outcome !== 'permanent' };
      const now = deps.clock.now();
      return { result: limit.observe(reply, now) ?? classifyHttpAnswer(reply, now), reply };
    };
    const post = async (message: DiscordMessage, wait: boolean, signal: AbortSignal | undefined) => {
      const target = new URL(url);
      if (wait) target.searchParams.set('wait', 'true');
      const { result, reply, unanswered } = await call({
        url: target.href,
        body: message,
        signal,
        ...(wait ? { maxBodyRead: MESSAGE_ANSWER_BYTES } : {}),
      });
      return { result, id: wait && reply && result.outcome === 'ok' ? messageIdOf(reply) : undefined, unanswered };
    };
    const edit = async (id: string, message: DiscordMessage, signal: AbortSignal | undefined) => {
      const target = new URL(url);
      target.pathname = `${target.pathname.replace(/\/$/, '')}/messages/${id}`;
      const { result, reply } = await call({ method: 'PATCH', url: target.href, body: editOf(message), signal });
      return reply?.status === 404 ? ('gone' as const) : result;
    };
    const renderOptions = (): DiscordRenderOptions => ({
      ...renderOptionsOf(config, deps),
      mention: config.mention,
      username: config.username,
      avatar_url: config.avatar_url,
    });
    // Without a state (notify-test) each message stands alone.
    const living =
      deps.store &&
      new DiscordLiving({
        name: config.name,
        webhookId,
        links: new SlackAppLinkStore(deps.store),
        clock: deps.clock,
        log: deps.logger.child({ channel: config.name, kind: 'discord' }),
        render: (n) => renderDiscord(n, renderOptions()),
        post,
        edit,
      });

    return {
      kind: 'discord',
      // One message per alert group, edited in place: it shows who has the alert.
      showsAcknowledgements: living !== undefined,
      // An edit and the news: two requests at most.
      sendTimeoutMs: config.timeout * 2,
      render: (n) => {
        const message = renderDiscord(n, renderOptions());
        return n.type === 'alerts' && living ? { ...message, living: discordLivingPart(n, message) } : message;
      },
      send: (delivery, signal) =>
        io.guarded(
          async () => (living ? living.deliver(delivery, signal) : (await post(delivery, false, signal)).result),
          signal,
        ),
      close: io.close,
    };
  },
} satisfies ChannelKind<DiscordConfig, DiscordDelivery>;
