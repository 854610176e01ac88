/**
 * A click on one of the living message's buttons, read from Slack's `block_actions` payload (the
 * same JSON over Socket Mode and over HTTP, where it is the form field `payload`): who clicked,
 * which message (its channel ID and ts), what the button does and which alert (its short id), and
 * where to answer (`response_url`). Validated at the edge: a payload of another type, an action that
 * is not one of ours (a link button, a value we did not make) is no click, and nothing is done.
 */
import { z } from 'zod';
import { visibleText } from '../lib/visible-text.js';
import { ACTION_PREFIX, parseButtonValue, type ButtonAction } from '../notify/channels/slack-app-buttons.js';

/** The fields of a `block_actions` payload this reads; everything else is ignored. */
const blockActionsSchema = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string().min(1), username: z.string().optional(), name: z.string().optional() }),
  channel: z.object({ id: z.string() }).optional(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional() }).optional(),
  message: z.object({ ts: z.string() }).optional(),
  response_url: z.string().optional(),
  actions: z
    .array(
      z.object({
        action_id: z.string().optional(),
        value: z.string().optional(),
        selected_option: z.object({ value: z.string() }).nullish(),
      }),
    )
    .min(1),
});

/** The longest user name kept: Slack's are far shorter; anything longer is cut. */
const MAX_NAME = 80;

/** Who clicked: their Slack user ID, and the name Slack gave with it. */
export interface SlackActor {
  id: string;
  /** Their handle as Slack gave it (their text: shown, never obeyed); null when none. */
  name: string | null;
}

/** A click on one of our buttons. */
export interface SlackClick {
  actor: SlackActor;
  /** The Slack channel ID and ts of the message clicked. */
  slackChannel: string;
  ts: string;
  action: ButtonAction;
  /** The alert's short id, as the button carried it. */
  alertId: string;
  /** Where Slack takes an answer to the person who clicked; absent: none can be given. */
  responseUrl: string | undefined;
}

/** The click a payload is, or undefined when it is not one of ours (another type, a link button, a value we did not make). */
export function clickOf(payload: unknown): SlackClick | undefined {
  const parsed = blockActionsSchema.safeParse(payload);
  if (!parsed.success) return undefined;
  const p = parsed.data;
  const action = p.actions[0]!;
  const ours = parseButtonValue(action.selected_option?.value ?? action.value);
  const slackChannel = p.container?.channel_id ?? p.channel?.id;
  const ts = p.container?.message_ts ?? p.message?.ts;
  if (!ours || !slackChannel || !ts) return undefined;
  return {
    actor: { id: p.user.id, name: cleanName(p.user.username ?? p.user.name) },
    slackChannel,
    ts,
    action: ours.action,
    alertId: ours.id,
    responseUrl: p.response_url,
  };
}

/**
 * Where to answer a click on one of our buttons (its `action_id` ours) whose value this version
 * did not make (an older release's message, a value edited by hand): nothing is done, but the
 * person is told. Undefined for anything else: a click we read, a link, another app's button.
 */
export function unknownButtonResponseUrl(payload: unknown): string | undefined {
  const parsed = blockActionsSchema.safeParse(payload);
  if (!parsed.success || clickOf(payload)) return undefined;
  const action = parsed.data.actions[0]!;
  const value = action.selected_option?.value ?? action.value;
  const ours = action.action_id?.startsWith(ACTION_PREFIX) && value !== undefined && !value.startsWith('console:');
  return ours ? parsed.data.response_url : undefined;
}

/** "alice (U0123ABCD)", or the ID alone: how a click's author is recorded (an acknowledgement's `by`). */
export function actorLabel(actor: SlackActor): string {
  return actor.name ? `${actor.name} (${actor.id})` : actor.id;
}

/** A name with its hidden and control characters written out (it is shown in terminals too), cut short; null when empty. */
function cleanName(name: string | undefined): string | null {
  const text = visibleText((name ?? '').trim(), { controls: true }).slice(0, MAX_NAME);
  return text === '' ? null : text;
}
