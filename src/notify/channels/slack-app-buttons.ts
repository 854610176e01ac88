/**
 * What the Slack app's living message offers a person to do about each alert still open: Acknowledge
 * (Unacknowledge once the message shows it acknowledged), Silence 1h, Silence 4h, the action a
 * remediation policy takes on request ("Retry now"), and Open in console. Buttons under an alert
 * shown in full; the same in an overflow menu (⋯) beside an alert shown on one line, so a message
 * of many alerts stays within Slack's 50 blocks (`slack-render.ts` places them). Pure.
 *
 * A click hands back only what it does and the alert's short id (`silence_1h:1a2b3c4d`): never a
 * label, a name or anything else the service sent. What it is about is looked up in the state when
 * it comes, among the alerts the clicked message shows (`slack-interactions.ts`). An action nobody
 * may do (`interactions.allow`) is not offered; one some may do is, and a click by anyone else is
 * answered with a polite refusal.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import { alertId } from '../../alerts/alert-id.js';
import { consoleLink } from './console-link.js';
import type { ChannelDeps } from './channel.js';
import type { SlackAppConfig } from './slack-app-config.js';
import type { EventControls, SlackButton, SlackOverflow } from './slack-render.js';
import { SLACK_LIMITS } from './slack-limits.js';

/** What a button does. */
export const BUTTON_ACTIONS = ['acknowledge', 'unacknowledge', 'silence_1h', 'silence_4h', 'remediate'] as const;

/** One of {@link BUTTON_ACTIONS}. */
export type ButtonAction = (typeof BUTTON_ACTIONS)[number];

/** The silences the buttons make: their label and how long they last. */
export const SILENCE_BUTTONS: Readonly<Record<'silence_1h' | 'silence_4h', { label: string; durationMs: number }>> = {
  silence_1h: { label: 'Silence 1h', durationMs: 3_600_000 },
  silence_4h: { label: 'Silence 4h', durationMs: 4 * 3_600_000 },
};

/** Where an action's button is found by a click: the prefix of our `action_id`s. */
export const ACTION_PREFIX = 'dw.';

/**
 * What the living message offers of each alert, as the channel's config and the composition root
 * say: without `interactions` clicks reach nobody, so only links are offered; without `consoleUrl`
 * no Open in console; `remedyOf` labels the action a remediation policy would take when asked.
 */
export type OfferSettings = Pick<SlackAppConfig, 'interactions'> & Pick<ChannelDeps, 'consoleUrl' | 'remedyOf'>;

/** The controls of the alerts of a living message, by fingerprint: none for an alert over. */
export function livingControls(alerts: readonly AlertEvent[], settings: OfferSettings): Map<string, EventControls> {
  const out = new Map<string, EventControls>();
  for (const e of alerts) {
    const controls = alertControls(e, settings);
    if (controls) out.set(e.fingerprint, controls);
  }
  return out;
}

/** One alert's controls as its latest shown event stands, or undefined when there is nothing to offer. */
export function alertControls(event: AlertEvent, settings: OfferSettings): EventControls | undefined {
  if (event.kind === 'resolved') return undefined;
  const id = alertId(event.fingerprint);
  const allow = settings.interactions?.allow;
  const may = (what: keyof NonNullable<typeof allow>) => allow !== undefined && allow[what] !== 'nobody';
  const actions: { action: ButtonAction; label: string; style?: 'primary' }[] = [];
  if (may('acknowledge')) {
    actions.push(
      event.kind === 'acknowledged'
        ? { action: 'unacknowledge', label: 'Unacknowledge' }
        : { action: 'acknowledge', label: 'Acknowledge', style: 'primary' },
    );
  }
  if (may('silence')) {
    for (const action of ['silence_1h', 'silence_4h'] as const)
      actions.push({ action, label: SILENCE_BUTTONS[action].label });
  }
  const remedy = may('remediate') ? settings.remedyOf?.(event.fingerprint) : undefined;
  if (remedy) actions.push({ action: 'remediate', label: remedy });
  const link = consoleLink(settings.consoleUrl, event.fingerprint);
  if (actions.length === 0 && !link) return undefined;

  const text = (label: string) => ({
    type: 'plain_text' as const,
    text: label.slice(0, SLACK_LIMITS.buttonText),
    emoji: true as const,
  });
  const buttons: SlackButton[] = actions.map((a) => ({
    type: 'button',
    action_id: `${ACTION_PREFIX}${a.action}.${id}`,
    text: text(a.label),
    value: buttonValue(a.action, id),
    ...(a.style ? { style: a.style } : {}),
  }));
  if (link)
    buttons.push({
      type: 'button',
      action_id: `${ACTION_PREFIX}console.${id}`,
      text: text('Open in console'),
      url: link,
    });
  const options: SlackOverflow['options'] = [
    ...actions.map((a) => ({ text: text(a.label), value: buttonValue(a.action, id) })),
    ...(link ? [{ text: text('Open in console'), value: `console:${id}`, url: link }] : []),
  ];
  // An overflow menu takes two to five options.
  const menu: SlackOverflow | null =
    options.length >= 2
      ? { type: 'overflow', action_id: `${ACTION_PREFIX}menu.${id}`, options: options.slice(0, 5) }
      : null;
  return { buttons, menu };
}

/** What a click hands back: the action and the alert's short id. */
export function buttonValue(action: ButtonAction, id: string): string {
  return `${action}:${id}`;
}

/**
 * The action and alert short id a click handed back, or undefined when it is not one of ours (a
 * link button, Open in console, a value made by something else): such a click does nothing.
 */
export function parseButtonValue(value: string | undefined): { action: ButtonAction; id: string } | undefined {
  const m = /^([a-z_0-9]+):([0-9a-f]{8})$/.exec(value ?? '');
  if (!m || !(BUTTON_ACTIONS as readonly string[]).includes(m[1]!)) return undefined;
  return { action: m[1] as ButtonAction, id: m[2]! };
}
