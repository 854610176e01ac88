/**
 * Microsoft Teams (`type: teams`): an Adaptive Card (version 1.5) posted through a Teams Workflows
 * webhook ("Post to a channel when a webhook request is received"), which answers 202 once it took
 * the request. The card has a header in the alert's colour, the facts of each event, its context
 * (what the API told after the cycle, the log around the failure), what to do next, and the links
 * (console, the platform's page, the app, runbooks) as Action.OpenUrl buttons. The retired Office
 * 365 connector URLs are refused by the config (`teams-config.ts`).
 *
 * Every piece of API text is escaped for the card's markdown (`escapeTeamsMarkdown`): it cannot
 * format, link or mention; links come from safe http(s) URLs only, as buttons. The card stays far
 * below Teams' message size limit (about 28 KB): its text is spent from a budget.
 */
import type {
  AlertsNotification,
  Channel,
  ChannelKind,
  NoticeNotification,
  Notification,
  RenderOptions,
} from './channel.js';
import { renderOptionsOf } from './channel.js';
import { eventFactList, type EventDescription, type Fact, type Link, type Tone } from './describe.js';
import { cutText, escapeTeamsMarkdown, oneLine, safeHttpUrl, safeLinks } from './escape.js';
import { postingChannel, urlSecrets } from './http-post.js';
import { consoleLink } from './console-link.js';
import { TEAMS_TEMPLATE_PARTS, teamsConfigSchema, type TeamsConfig } from './teams-config.js';
import { defaultTemplates } from './template-config.js';
import { describedAlerts, noticeTitle } from './template-view.js';
import { jsonBytes, packLines, TextBudget } from './text-budget.js';

/** The Adaptive Card version Teams renders in full. */
export const ADAPTIVE_CARD_VERSION = '1.5';

/**
 * What a card carries at most: text (bytes as sent, all blocks: Teams counts the message's bytes), events
 * shown in full, buttons, facts per event, characters of one block.
 */
export const TEAMS_LIMITS = { text: 20_000, events: 10, actions: 6, facts: 20, block: 2_000 } as const;

/** A Container's style and a TextBlock's colour, by tone: Adaptive Cards name both alike. */
const STYLE: Readonly<Record<Tone, ContainerStyle & TextColor>> = {
  critical: 'attention',
  warning: 'warning',
  info: 'accent',
  resolved: 'good',
  ok: 'good',
};

type ContainerStyle = 'default' | 'emphasis' | 'good' | 'attention' | 'warning' | 'accent';
type TextColor = 'default' | 'dark' | 'light' | 'accent' | 'good' | 'warning' | 'attention';

/** The card elements this channel builds (Adaptive Cards 1.5). */
export type CardElement =
  | {
      type: 'TextBlock';
      text: string;
      wrap: true;
      size?: 'small' | 'medium' | 'large';
      weight?: 'bolder';
      color?: TextColor;
      isSubtle?: true;
      fontType?: 'monospace';
      style?: 'heading';
      spacing?: 'none' | 'small' | 'medium';
      separator?: true;
    }
  | { type: 'FactSet'; facts: { title: string; value: string }[] }
  | { type: 'Container'; style: ContainerStyle; bleed: true; items: CardElement[] };

/** A button that opens a link. */
export interface CardAction {
  type: 'Action.OpenUrl';
  title: string;
  url: string;
}

/** The Adaptive Card. */
export interface AdaptiveCard {
  $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
  type: 'AdaptiveCard';
  version: typeof ADAPTIVE_CARD_VERSION;
  body: CardElement[];
  actions?: CardAction[];
  msteams: { width: 'Full' };
}

/** What a Workflows webhook takes: a message with the card as its one attachment. */
export interface TeamsMessage {
  type: 'message';
  attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive'; contentUrl: null; content: AdaptiveCard }];
}

/** `templates/teams/`: the built-in rendering's own templates. */
export const TEAMS_TEMPLATES = defaultTemplates('teams', TEAMS_TEMPLATE_PARTS);

/** Builds the Workflows message for a notification. Pure. */
export function renderTeams(n: Notification, o: RenderOptions): TeamsMessage {
  const card = n.type === 'notice' ? noticeCard(n, o) : alertsCard(n, o);
  return {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }],
  };
}

function card(body: CardElement[], actions: CardAction[]): AdaptiveCard {
  return {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    body,
    ...(actions.length > 0 ? { actions: actions.slice(0, TEAMS_LIMITS.actions) } : {}),
    msteams: { width: 'Full' },
  };
}

/** The coloured header: a Container in the tone's style, the title in large bold. */
function header(tone: Tone, title: string): CardElement {
  const heading = text(title, { size: 'large', weight: 'bolder', style: 'heading' });
  return { type: 'Container', style: STYLE[tone], bleed: true, items: [heading] };
}

function text(value: string, extra: Partial<Extract<CardElement, { type: 'TextBlock' }>> = {}): CardElement {
  return { type: 'TextBlock', text: value, wrap: true, ...extra };
}

function alertsCard(n: AlertsNotification, o: RenderOptions): AdaptiveCard {
  const budget = new TextBudget(TEAMS_LIMITS.text, jsonBytes);
  const { d, view, templates } = describedAlerts(n, o, TEAMS_TEMPLATES);
  const title = templates.title!.render([view], (v) => escapeTeamsMarkdown(v, 300));
  const body: CardElement[] = [header(d.headline.tone, budget.spend(cutText(title, TEAMS_LIMITS.block)))];
  if (d.shared.length > 0) body.push(factSet(d.shared, budget));
  let shown = 0;
  // Past the most events or the budget, every later event is left out too: the rest are counted.
  for (const e of d.events.slice(0, TEAMS_LIMITS.events)) {
    if (budget.left < 200) break;
    const lead = templates.text!.render([view, view.events[shown]!], (v) => escapeTeamsMarkdown(v, 1_000));
    body.push(...eventElements(e, lead, budget));
    shown++;
  }
  const more = d.omitted + d.events.length - shown;
  if (more > 0) {
    const where = d.omittedCommand ? ` (${escapeTeamsMarkdown(d.omittedCommand, 500)} lists every open alert)` : '';
    body.push(text(`…and ${more} more not shown${where}`, { isSubtle: true }));
  }
  for (const step of d.nextSteps) body.push(text(`**Next step:** ${escapeTeamsMarkdown(step, 500)}`));
  if (d.silenceCommand) {
    body.push(
      text('To silence:', { isSubtle: true, spacing: 'small' }),
      text(escapeTeamsMarkdown(d.silenceCommand, TEAMS_LIMITS.block), { fontType: 'monospace', spacing: 'none' }),
    );
  }
  body.push(text(`deploy-watchdog · ${escapeTeamsMarkdown(o.channelName, 100)}`, { size: 'small', isSubtle: true }));
  return card(body, actionsOf(n, d.events, d.runbooks, o));
}

/** One event: its template's text (`lead`: status and summary) in its colour, its facts, its context, its log. */
function eventElements(e: EventDescription, lead: string, budget: TextBudget): CardElement[] {
  const shown = budget.take((max) => cutText(lead, max), TEAMS_LIMITS.block, 1) ?? '';
  const out: CardElement[] = shown === '' ? [] : [text(shown, { color: STYLE[e.tone], separator: true })];
  const facts: Fact[] = [...(e.app ? [{ label: 'App', value: e.app }] : []), ...eventFactList(e)];
  if (facts.length > 0) out.push(factSet(facts.slice(0, TEAMS_LIMITS.facts), budget));
  const log = e.context?.log;
  if (log && budget.left > 200) {
    out.push(text(`**${escapeTeamsMarkdown(log.title, 300)}**`, { size: 'small' }));
    const lines = log.lines.map((l) => escapeTeamsMarkdown(l.stamp ? `${l.stamp}  ${l.text}` : l.text, 300));
    const shown = budget.take((max) => packLines(lines, max, undefined, '\n\n'), TEAMS_LIMITS.block);
    if (shown) out.push(text(shown, { fontType: 'monospace', size: 'small', spacing: 'none' }));
  }
  return out;
}

/** Facts as a FactSet, titles ours, values API text escaped; each spent from the budget. */
function factSet(facts: readonly Fact[], budget: TextBudget): CardElement {
  const out: { title: string; value: string }[] = [];
  for (const f of facts) {
    const value = budget.take((max) => escapeTeamsMarkdown(f.value, max), 1_000, 10);
    if (value === null) break;
    out.push({ title: budget.spend(escapeTeamsMarkdown(f.label, 60)), value });
  }
  return { type: 'FactSet', facts: out };
}

/** The buttons: the alert's console page (one alert), each event's platform page and app, the runbooks; each URL once. */
function actionsOf(
  n: AlertsNotification,
  events: readonly EventDescription[],
  runbooks: readonly Link[],
  o: RenderOptions,
): CardAction[] {
  const links: { label: string; url: string | null | undefined }[] = [];
  if (n.events.length === 1)
    links.push({ label: 'Open in console', url: consoleLink(o.consoleUrl, n.events[0]!.fingerprint) });
  for (const e of events) {
    if (e.page) links.push({ label: e.page.label, url: e.page.url });
    if (e.app && e.url) links.push({ label: 'Open the app', url: e.url });
  }
  links.push(...runbooks);
  return safeLinks(links).map(({ label, url }) => ({ type: 'Action.OpenUrl', title: oneLine(label, 60), url }));
}

/** A notice: its title as the header, its fields as facts, its lines as text. */
function noticeCard(n: NoticeNotification, o: RenderOptions): AdaptiveCard {
  const budget = new TextBudget(TEAMS_LIMITS.text, jsonBytes);
  const title = noticeTitle(n, o, TEAMS_TEMPLATES, (v) => escapeTeamsMarkdown(v, 300));
  const body: CardElement[] = [header(n.severity ?? 'info', title)];
  if (n.fields?.length) body.push(factSet(n.fields, budget));
  for (const line of n.lines ?? []) {
    const shown = budget.take((max) => escapeTeamsMarkdown(line, max), TEAMS_LIMITS.block);
    if (shown === null) break;
    body.push(text(shown));
  }
  const url = safeHttpUrl(n.url);
  return card(body, url ? [{ type: 'Action.OpenUrl', title: 'Details', url }] : []);
}

/** The Teams channel kind. */
export const teamsChannel = {
  configSchema: teamsConfigSchema,
  templateParts: TEAMS_TEMPLATE_PARTS,
  create(config, deps): Channel<TeamsMessage> {
    // The URL's query holds its signature (`sig=…`): scrubbed wherever it could be echoed.
    return postingChannel(config, deps, 'Teams', urlSecrets(config.webhook_url), {
      render: (n) => renderTeams(n, renderOptionsOf(config, deps)),
      request: (message) => ({ url: config.webhook_url.reveal(), body: message }),
    });
  },
} satisfies ChannelKind<TeamsConfig, TeamsMessage>;
