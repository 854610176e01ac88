/**
 * Slack's Block Kit rendering of a notification, shared by the incoming-webhook channel
 * (`slack.ts`) and the Slack app channel (`slack-app.ts`): pure, every piece of API text escaped
 * for mrkdwn, within Slack's limits.
 */
import type { AlertsNotification, ChannelDeps, NoticeNotification, Notification, RenderOptions } from './channel.js';
import { criticalNewsIn, renderOptionsOf } from './channel.js';
import { formatUtc } from '../../lib/format-utc.js';
import {
  MAX_NEXT_STEPS,
  TONES,
  type EventDescription,
  type Fact,
  type Link,
  type LogDescription,
  type Since,
} from './describe.js';
import { cutText, escapeMrkdwn, mrkdwnLink, oneLine, plainText, safeHttpUrl } from './escape.js';
import { SLACK_TEMPLATE_PARTS, type SlackConfig } from './slack-config.js';
import { SLACK_LIMITS } from './slack-limits.js';
import { defaultTemplates } from './template-config.js';
import { describedAlerts, noticeTitle } from './template-view.js';
import { packLines } from './text-budget.js';

/** `templates/slack/`: the built-in rendering's own templates. */
export const SLACK_TEMPLATES = defaultTemplates('slack', SLACK_TEMPLATE_PARTS);

/** Longest single value (an app name, a reason) before it is cut. */
const MAX_VALUE = 300;

/**
 * Already-escaped mrkdwn, always `verbatim`: Slack then turns no name, address or `@here` in the
 * service's text into a link or a mention; our own `<url|label>` links and mentions still work.
 */
export interface SlackMrkdwn {
  type: 'mrkdwn';
  text: string;
  verbatim: true;
}

/** The Block Kit blocks this channel builds. Plain shapes: Slack's own types are a transitive package. */
export type SlackBlock =
  | { type: 'header'; text: { type: 'plain_text'; text: string; emoji: true } }
  | { type: 'section'; text: SlackMrkdwn; accessory?: SlackOverflow }
  | { type: 'section'; fields: SlackMrkdwn[] }
  | { type: 'context'; elements: SlackMrkdwn[] }
  | { type: 'actions'; elements: SlackButton[] };

/** Plain text as a button or a menu option shows it. */
export interface SlackPlainText {
  type: 'plain_text';
  text: string;
  emoji: true;
}

/**
 * A button: a link (`url`: opens it, no interactivity needed), or an action (`value`: what the
 * click hands back to the app).
 */
export interface SlackButton {
  type: 'button';
  action_id: string;
  text: SlackPlainText;
  url?: string;
  value?: string;
  style?: 'primary' | 'danger';
}

/** An overflow menu (⋯): two to five options, each an action (`value`) or a link (`url`). */
export interface SlackOverflow {
  type: 'overflow';
  action_id: string;
  options: { text: SlackPlainText; value: string; url?: string }[];
}

/**
 * What a person can do about one event's alert from the message, made by the channel that offers
 * it (the Slack app's buttons): `buttons` under the event when events are shown in full, `menu`
 * beside its line when they are one line each.
 */
export interface EventControls {
  buttons: SlackButton[];
  menu: SlackOverflow | null;
}

/** A rendered Slack message: `text` is the notification fallback, `blocks` what people see. */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/** What rendering needs besides the notification; all from config or the clock. */
export interface SlackRenderOptions extends RenderOptions {
  /**
   * The configured mention (never from the API: `<!here>`, `<!subteam^S123>`), added only when a
   * firing critical event of the message has one of its `environment_types`: a critical staging
   * failure is not worth a page.
   */
  mention?: SlackConfig['mention'] | undefined;
  /** What a person can do about each alert from the message, by fingerprint; absent: nothing but read. */
  controls?: ReadonlyMap<string, EventControls> | undefined;
}

/** The render options of a Slack channel of either kind, from its config and what the composition root gives, at this moment. */
export function slackRenderOptions(
  config: Pick<SlackConfig, 'name' | 'mention'>,
  deps: ChannelDeps,
): SlackRenderOptions {
  return { ...renderOptionsOf(config, deps), mention: config.mention };
}

/** Builds the Slack message for a notification. Pure. */
export function renderSlack(n: Notification, options: SlackRenderOptions): SlackMessage {
  return n.type === 'notice' ? renderNotice(n, options) : renderAlerts(n, options);
}

function renderAlerts(n: AlertsNotification, o: SlackRenderOptions): SlackMessage {
  const { d, view, templates } = describedAlerts(n, o, SLACK_TEMPLATES);
  // The header is plain text: values only lose their control characters there.
  const title = templates.title!.render([view], (v) => plainText(v, 300));
  const lead = (i: number) => templates.text!.render([view, view.events[i]!], (v) => escapeMrkdwn(v, 500));
  const mention = mentionFor(n, o.mention);

  const blocks: SlackBlock[] = [header(title)];
  if (mention) blocks.push(section(mention));
  if (d.shared.length > 0) blocks.push(context(d.shared.map(factText).join('  ·  ')));
  const controls = n.events.map((e) => o.controls?.get(e.fingerprint));
  if (d.compact) {
    // A channel's own `text` template shapes its alerts in the compact form too, each on one line.
    const line =
      templates.text === SLACK_TEMPLATES.text
        ? (i: number) => compactLine(d.events[i]!)
        : (i: number) => oneLine(lead(i), MAX_VALUE * 2);
    blocks.push(...compactLines(line, controls, SLACK_LIMITS.blocks - blocks.length - BLOCKS_AFTER_EVENTS));
  } else {
    d.events.forEach((e, i) => {
      blocks.push(section(eventText(e, lead(i))));
      if (e.context?.log) blocks.push(logBlock(e.context.log));
      const page = e.page && buttons([e.page], 'page');
      const own = controls[i]?.buttons ?? [];
      // One row under the event: what can be done about it, then its page.
      const row = [...own, ...(page?.type === 'actions' ? page.elements : [])];
      if (row.length > 0) blocks.push({ type: 'actions', elements: row.slice(0, SLACK_LIMITS.actionsElements) });
    });
  }
  if (d.omitted > 0) {
    const where = d.omittedCommand === null ? null : commandSpan(d.omittedCommand);
    // A line carrying a command is never cut: the command is at most MAX_COMMAND_LINE (500)
    // characters, five times that escaped, well within the block's 3,000.
    blocks.push(context(`…and ${d.omitted} more not shown${where ? `: ${where} lists every open alert` : ''}`));
  }
  for (const step of d.nextSteps) blocks.push(context(`*Next step:* ${escapeMrkdwn(step, 500)}`));
  const runbooks = buttons(d.runbooks, 'runbook');
  if (runbooks) blocks.push(runbooks);
  const silence = d.silenceCommand === null ? null : commandSpan(d.silenceCommand);
  if (silence) blocks.push(context(`To silence: ${silence}`));
  blocks.push(context(`deploy-watchdog · ${escapeMrkdwn(o.channelName, 100)}`));

  const first = d.events[0] ? ` — ${escapeMrkdwn(d.events[0].summary, 300)}` : '';
  const text = `${mention ? `${mention} ` : ''}${escapeMrkdwn(title, 400)}${first}`;
  return { text: cutText(text, SLACK_LIMITS.text), blocks: capBlocks(blocks) };
}

/**
 * Link buttons, one per link whose URL is a safe http(s) address (configured, and filled with an
 * id URL-encoded; checked again here all the same), or null when none is.
 */
function buttons(links: readonly Link[], kind: string): SlackBlock | null {
  const elements: SlackButton[] = [];
  for (const link of links) {
    const url = safeHttpUrl(link.url, SLACK_LIMITS.buttonUrl);
    if (!url || elements.length === SLACK_LIMITS.actionsElements) continue;
    elements.push({
      type: 'button',
      action_id: `${kind}-${elements.length + 1}`,
      text: { type: 'plain_text', text: oneLine(link.label, SLACK_LIMITS.buttonText), emoji: true },
      url,
    });
  }
  return elements.length > 0 ? { type: 'actions', elements } : null;
}

/**
 * A shell line as a code span that shows, and copies as, exactly that line: Slack undoes the
 * `&amp;`, `&lt;` and `&gt;` escaping and formats nothing inside the backticks. Null when the line
 * holds a backtick, which would end the span (mrkdwn has no escape for it); the line is never
 * changed into something else. Its block is `verbatim` ({@link SlackMrkdwn}), as every one is.
 */
function commandSpan(line: string): string | null {
  return line.includes('`') ? null : `\`${escapeMrkdwn(line, Number.POSITIVE_INFINITY)}\``;
}

/** The configured mention, when a firing critical event is in one of its environments. */
function mentionFor(n: AlertsNotification, mention: SlackRenderOptions['mention']): string | undefined {
  return mention?.critical && criticalNewsIn(n, mention.environment_types) ? mention.critical : undefined;
}

/** `*Label:* value`, a time as a Slack date token shown in each reader's own time zone. */
function factText(f: Fact): string {
  return `*${escapeMrkdwn(f.label, 60)}:* ${f.at !== undefined ? dateToken(f.at) : escapeMrkdwn(f.value, MAX_VALUE)}`;
}

/** Slack shows <!date^…> in the reader's time zone; the fallback after | is UTC. */
function dateToken(ms: number): string {
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${formatUtc(ms)}>`;
}

/** The mrkdwn of one event: its template's text (status and summary), where, the check's facts, since when. */
function eventText(d: EventDescription, lead: string): string {
  const lines = lead === '' ? [] : [lead];
  const where: string[] = [];
  // A resolved event keeps only its app link: one tap to see it is back.
  if (d.app) where.push(`*App:* ${mrkdwnLink(d.url, d.app, MAX_VALUE)}`);
  else if (d.url && d.tone !== 'resolved') where.push(`*Link:* ${mrkdwnLink(d.url, d.url, MAX_VALUE)}`);
  for (const f of d.where) where.push(factText(f));
  if (where.length > 0) lines.push(where.join('  ·  '));
  if (d.facts.length > 0) lines.push(d.facts.map(factText).join('  ·  '));
  if (d.since) lines.push(`*Since:* ${sinceText(d.since)}`);
  if (d.context && d.context.facts.length > 0) lines.push(d.context.facts.map(factText).join('  ·  '));
  for (const note of d.context?.notes ?? []) lines.push(`*Note:* ${escapeMrkdwn(note, MAX_VALUE)}`);
  if (d.resolution) lines.push(`*Why:* ${escapeMrkdwn(d.resolution, MAX_VALUE)}`);
  // Whole lines keep links and <!date> tokens intact; a line that does not fit ends the text with "…".
  return packLines(lines, SLACK_LIMITS.text, (out, line) => (out ? `${out}\n…` : cutText(line, SLACK_LIMITS.text)));
}

/** Longest log line in Slack, escaped (the width cut happened when it was read: this is a backstop). */
const MAX_LOG_LINE = 1000;

/**
 * A log excerpt as a code block under its title: monospaced, formatted by nothing, shown as written
 * (`verbatim`: no name or address becomes a link). Each line is escaped like any API text, so a
 * backtick in it becomes ˋ (U+02CB): a code block has no escape for the backticks that end it.
 * Whole lines only, as many as fit Slack's limit, "…" for the rest.
 */
function logBlock(log: LogDescription): SlackBlock {
  const head = `*${escapeMrkdwn(log.title, 200)}*\n\`\`\`\n`;
  const tail = '\n```';
  const lines = log.lines.map((l) => {
    const text = escapeMrkdwn(l.text, MAX_LOG_LINE);
    return l.stamp ? `${l.stamp}  ${text}` : text;
  });
  // Room kept for the "\n…" that ends an excerpt cut short (its first line always fits).
  const body = packLines(lines, SLACK_LIMITS.text - head.length - tail.length - 2, (packed) => `${packed}\n…`);
  return { type: 'section', text: { type: 'mrkdwn', text: `${head}${body}${tail}`, verbatim: true } };
}

function sinceText(since: Since): string {
  const when = since.at !== null ? dateToken(since.at) : escapeMrkdwn(since.utc, 60);
  return since.ago ? `${when} (${since.ago} ago)` : when;
}

/**
 * The most blocks a message has after its events: "…and N more", the next steps, the runbooks,
 * the silence line, the footer, and the living message's notes.
 */
const BLOCKS_AFTER_EVENTS = 3 + MAX_NEXT_STEPS + 1 + 1;

/**
 * Events one line each (`line(i)`, one per control): an event with a menu gets a section of its own with the menu beside it,
 * while `budget` blocks allow (one is kept for the lines after it); the other lines are packed into
 * as few sections as fit, in order.
 */
function compactLines(
  line: (i: number) => string,
  controls: readonly (EventControls | undefined)[],
  budget: number,
): SlackBlock[] {
  const out: SlackBlock[] = [];
  let pending: string[] = [];
  const flush = () => {
    for (const chunk of chunkLines(pending, SLACK_LIMITS.text)) out.push(section(chunk));
    pending = [];
  };
  controls.forEach((control, i) => {
    const menu = control?.menu;
    const after = i < controls.length - 1 ? 1 : 0;
    if (menu && out.length + (pending.length > 0 ? 1 : 0) + 1 + after <= budget) {
      flush();
      out.push(section(line(i), menu));
    } else {
      pending.push(line(i));
    }
  });
  flush();
  return out;
}

/**
 * One event on one line: "🔴 <link|app-3> · step restart: database connection refused · for 47m ·
 * <page|Run page>".
 */
function compactLine(d: EventDescription): string {
  const parts: string[] = [];
  if (d.briefIsSummary || !d.app) parts.push(escapeMrkdwn(d.summary, MAX_VALUE));
  else parts.push(mrkdwnLink(d.url, d.app, 120));
  if (!d.briefIsSummary) parts.push(escapeMrkdwn(d.brief, MAX_VALUE));
  if (d.age) parts.push(d.age);
  const page = d.page && safeHttpUrl(d.page.url) ? mrkdwnLink(d.page.url, d.page.label, 40) : null;
  if (page) parts.push(page);
  return `${TONES[d.tone].emoji} ${parts.join(' · ')}`;
}

function renderNotice(n: NoticeNotification, o: SlackRenderOptions): SlackMessage {
  // The header is plain text; the notification's text is mrkdwn: the values escaped for each.
  const blocks: SlackBlock[] = [header(noticeTitle(n, o, SLACK_TEMPLATES, (v) => plainText(v, 300)))];
  const fields = (n.fields ?? []).map((f) => ({
    type: 'mrkdwn' as const,
    text: cutText(`*${escapeMrkdwn(f.label, 100)}*\n${escapeMrkdwn(f.value, MAX_VALUE * 2)}`, SLACK_LIMITS.fieldText),
    verbatim: true as const,
  }));
  for (let i = 0; i < fields.length; i += SLACK_LIMITS.fieldsPerSection) {
    blocks.push({ type: 'section', fields: fields.slice(i, i + SLACK_LIMITS.fieldsPerSection) });
  }
  const lines = (n.lines ?? []).map((l) => escapeMrkdwn(l, 1000));
  for (const chunk of chunkLines(lines, SLACK_LIMITS.text)) blocks.push(section(chunk));
  if (safeHttpUrl(n.url)) blocks.push(section(mrkdwnLink(n.url, 'Open', 20)));
  blocks.push(context(`deploy-watchdog · ${escapeMrkdwn(o.channelName, 100)} · ${escapeMrkdwn(n.topic, 60)}`));
  // The notification's text is mrkdwn: the title's values escaped for it.
  const text = noticeTitle(n, o, SLACK_TEMPLATES, (v) => escapeMrkdwn(v, 1000));
  return { text: cutText(text, SLACK_LIMITS.text), blocks: capBlocks(blocks) };
}

/** A header block; plain text needs no entity escaping, only one line and cutting. */
function header(text: string): SlackBlock {
  return { type: 'header', text: { type: 'plain_text', text: oneLine(text, SLACK_LIMITS.header), emoji: true } };
}

/** A section with already-escaped mrkdwn, and a menu beside it when given. */
function section(text: string, accessory?: SlackOverflow): SlackBlock {
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: cutText(text, SLACK_LIMITS.text), verbatim: true },
    ...(accessory ? { accessory } : {}),
  };
}

/** A context line with already-escaped mrkdwn, cut to Slack's limit. */
export function context(text: string): SlackBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: cutText(text, SLACK_LIMITS.text), verbatim: true }] };
}

/** Splits escaped lines into chunks of at most `max` characters, each line whole where it fits. */
function chunkLines(lines: string[], max: number): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const raw of lines) {
    const line = cutText(raw, max);
    if (current && current.length + 1 + line.length > max) {
      chunks.push(current);
      current = line;
    } else {
      current = current ? `${current}\n${line}` : line;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

/**
 * Keeps a message within Slack's block limit, saying so when blocks were dropped. The number of
 * events is capped before rendering (`notify.max_items_per_message`); this is Slack's own limit,
 * enforced here whatever that cap is.
 */
function capBlocks(blocks: SlackBlock[]): SlackBlock[] {
  if (blocks.length <= SLACK_LIMITS.blocks) return blocks;
  return [...blocks.slice(0, SLACK_LIMITS.blocks - 1), context('…message shortened to fit Slack')];
}
