/**
 * A protocol-level fake of a Teams Workflows webhook ("Post to a channel when a webhook request is
 * received") for tests, on loopback. Its URL looks like a Workflows one, its signature (`sig=…`)
 * the credential: a request without it is refused 401. The body must be a message whose one
 * attachment is an Adaptive Card, checked against the Adaptive Card schema 1.5 for every element
 * and property the card may use (TextBlock, FactSet, Container, Action.OpenUrl; their enums as the
 * schema gives them; no property it does not know), and under Teams' 28 KB message limit (413
 * otherwise). A valid card is answered 202 Accepted, as Workflows does; anything else 400 with
 * what is wrong.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { problems, startFakeService, type FakeService } from './fake-service.js';

const spacing = z.enum(['default', 'none', 'small', 'medium', 'large', 'extraLarge', 'padding']);
const colors = z.enum(['default', 'dark', 'light', 'accent', 'good', 'warning', 'attention']);
const containerStyle = z.enum(['default', 'emphasis', 'good', 'attention', 'warning', 'accent']);

/** What every element may carry (Adaptive Cards 1.5 "Element" and "ToggleableItem"). */
const common = {
  id: z.string().optional(),
  spacing: spacing.optional(),
  separator: z.boolean().optional(),
  isVisible: z.boolean().optional(),
  height: z.enum(['auto', 'stretch']).optional(),
};

const textBlock = z
  .object({
    type: z.literal('TextBlock'),
    text: z.string(),
    color: colors.optional(),
    fontType: z.enum(['default', 'monospace']).optional(),
    horizontalAlignment: z.enum(['left', 'center', 'right']).optional(),
    isSubtle: z.boolean().optional(),
    maxLines: z.number().int().min(0).optional(),
    size: z.enum(['default', 'small', 'medium', 'large', 'extraLarge']).optional(),
    weight: z.enum(['default', 'lighter', 'bolder']).optional(),
    wrap: z.boolean().optional(),
    // New in 1.5.
    style: z.enum(['default', 'heading']).optional(),
    ...common,
  })
  .strict();

const factSet = z
  .object({
    type: z.literal('FactSet'),
    facts: z.array(z.object({ title: z.string(), value: z.string() }).strict()),
    ...common,
  })
  .strict();

type Element = z.infer<typeof textBlock> | z.infer<typeof factSet> | { type: 'Container'; items: Element[] };

const element: z.ZodType<Element> = z.lazy(() => z.union([textBlock, factSet, container]));

const container = z
  .object({
    type: z.literal('Container'),
    items: z.array(element),
    style: containerStyle.optional(),
    bleed: z.boolean().optional(),
    minHeight: z.string().optional(),
    verticalContentAlignment: z.enum(['top', 'center', 'bottom']).optional(),
    ...common,
  })
  .strict();

const openUrl = z
  .object({
    type: z.literal('Action.OpenUrl'),
    title: z.string().min(1),
    url: z.url({ protocol: /^https?$/ }),
    style: z.enum(['default', 'positive', 'destructive']).optional(),
    tooltip: z.string().optional(),
  })
  .strict();

/** An Adaptive Card as this fake takes it: schema 1.5, the elements above. */
export const adaptiveCard = z
  .object({
    $schema: z.string().optional(),
    type: z.literal('AdaptiveCard'),
    version: z.literal('1.5'),
    body: z.array(element).min(1),
    actions: z.array(openUrl).max(6).optional(),
    msteams: z
      .object({ width: z.enum(['Full']).optional() })
      .strict()
      .optional(),
    fallbackText: z.string().optional(),
    speak: z.string().optional(),
    lang: z.string().optional(),
  })
  .strict();

/** What a Workflows webhook takes. */
export const workflowsMessage = z
  .object({
    type: z.literal('message'),
    attachments: z
      .array(
        z
          .object({
            contentType: z.literal('application/vnd.microsoft.card.adaptive'),
            contentUrl: z.null().optional(),
            content: adaptiveCard,
          })
          .strict(),
      )
      .length(1),
  })
  .strict();

/** A card the fake took. */
export type ReceivedCard = z.infer<typeof adaptiveCard>;

/** Teams' limit of one message, in bytes. */
export const TEAMS_MESSAGE_LIMIT = 28 * 1024;

/** The running fake. */
export interface TeamsFake extends FakeService {
  /** The Workflows URL, its signature in its query. */
  readonly url: string;
  /** The signature: a secret, to look for where it must never be. */
  readonly signature: string;
  readonly cards: ReceivedCard[];
  readonly invalid: string[][];
}

/** Starts the fake. */
export async function startTeamsFake(): Promise<TeamsFake> {
  const signature = randomBytes(24).toString('base64url');
  const workflow = randomBytes(16).toString('hex');
  const path = `/workflows/${workflow}/triggers/manual/paths/invoke`;
  const cards: ReceivedCard[] = [];
  const invalid: string[][] = [];
  const service = await startFakeService((req) => {
    const url = new URL(req.url, 'http://teams');
    if (req.method !== 'POST' || url.pathname !== path) return { status: 404, body: { error: { code: 'NotFound' } } };
    if (url.searchParams.get('sig') !== signature) {
      return { status: 401, body: { error: { code: 'DirectApiAuthorizationRequired', message: 'bad signature' } } };
    }
    if (Buffer.byteLength(req.raw) > TEAMS_MESSAGE_LIMIT) {
      invalid.push(['message too large']);
      return { status: 413, body: { error: { code: 'MessageTooLarge' } } };
    }
    const parsed = workflowsMessage.safeParse(req.body);
    if (!parsed.success) {
      const errors = problems(parsed.error.issues);
      invalid.push(errors);
      return { status: 400, body: { error: { code: 'InvalidRequestContent', message: errors.join('; ') } } };
    }
    cards.push(parsed.data.attachments[0]!.content);
    return { status: 202 };
  });
  const url = `${service.root}${path}?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${signature}`;
  return Object.assign(service, { url, signature, cards, invalid });
}

/** Every text of a card (TextBlocks, fact titles and values, button titles), in order, for assertions. */
export function cardTexts(card: ReceivedCard): string[] {
  const out: string[] = [];
  const walk = (e: Element) => {
    if (e.type === 'TextBlock') out.push(e.text);
    else if (e.type === 'FactSet') for (const f of e.facts) out.push(f.title, f.value);
    else for (const i of e.items) walk(i);
  };
  card.body.forEach(walk);
  for (const a of card.actions ?? []) out.push(a.title);
  return out;
}
