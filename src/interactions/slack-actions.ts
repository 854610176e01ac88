/**
 * What each of the living message's buttons does, through the same modules as the console and the
 * CLI, so the state, the audit and the words are the same whichever surface was used:
 * - Acknowledge / Unacknowledge: `acknowledge.ts` (via `slack`, by the Slack user), then the
 *   delivery loop is woken so the channels that show acknowledgements hear of it at once.
 * - Silence 1h / 4h: a silence (`silences.ts`) on the alert's own matchers (`silence-matchers.ts`,
 *   as the console's "Silence…" offers them), by `slack:<user>`, with a reason saying where it came
 *   from; a silence already in force for at least as long is left as it is.
 * - Retry now: the remediator's request (`Remediator.request`): the policy's own decision, one
 *   attempt with its stored key, sent by the same loop.
 * Each answers a named outcome, the words said to the person who clicked, and a line for the
 * message itself when something was done. A click on an alert already over changes nothing.
 */
import { acknowledge, acknowledgeText, notFiringText, unacknowledge } from '../alerts/acknowledge.js';
import { alertId } from '../alerts/alert-id.js';
import { alertStoreOf, type AlertRow } from '../alerts/alert-store.js';
import { formatMatcher } from '../alerts/matchers.js';
import { silenceMatchersFor } from '../alerts/silence-matchers.js';
import { activeSilenceFor, createSilence, describeMatchers } from '../alerts/silences.js';
import { formatDuration } from '../lib/format-duration.js';
import { formatUtc } from '../lib/format-utc.js';
import type { Logger } from '../lib/logger.js';
import { SILENCE_BUTTONS, type ButtonAction } from '../notify/channels/slack-app-buttons.js';
import { NO_POLICY_TEXT, unsentText } from '../remediation/request-words.js';
import type { Remediator } from '../remediation/remediator.js';
import type { Store } from '../state/store.js';
import { commandLine } from '../notify/channels/shell-line.js';
import type { InteractionOutcome } from './interaction-audit-store.js';

/** What an action came to. */
export interface ActionResult {
  outcome: InteractionOutcome;
  /** Said to the person who clicked (plain words, escaped by whoever shows them). */
  text: string;
  /** Kept on the living message when something was done: what, and by whom. */
  note?: string;
  /** What the audit keeps besides `text`, when there is more to say (why a check failed). */
  detail?: string;
}

/** What the actions work with: one running configuration's parts. */
export interface ActionDeps {
  store: Store;
  /** Undefined when no remediation policy is configured. */
  remediation: Pick<Remediator, 'request'> | undefined;
  /** Wakes the delivery loop (an acknowledgement to route). */
  wake: () => void;
  log: Logger;
  /**
   * The config file a command must name (`--config`), as the messages' own command lines do;
   * undefined when the default path finds it.
   */
  commandConfigFile?: string | undefined;
}

/** Who clicked, as each record names them: `alice (U0123)` (the acknowledgement's `by`). */
export interface Clicker {
  label: string;
  /** Which channel's message, for the log and the silence's reason. */
  channel: string;
}

/** Carries out one button's action on an alert, at `now`. Throws only for a fault of the state. */
export function runAction(
  deps: ActionDeps,
  action: ButtonAction,
  fingerprint: string,
  who: Clicker,
  now: number,
): ActionResult {
  const click = { deps, fingerprint, who, now };
  switch (action) {
    case 'acknowledge':
    case 'unacknowledge':
      return acknowledgeAction(click, action);
    case 'silence_1h':
    case 'silence_4h':
      return silenceAction(click, action);
    case 'remediate':
      return remediateAction(click);
  }
}

/** One click's action as the actions below take it: with what, on which alert, by whom, when. */
type Click = { deps: ActionDeps; fingerprint: string; who: Clicker; now: number };

function acknowledgeAction(
  { deps, fingerprint, who, now }: Click,
  action: 'acknowledge' | 'unacknowledge',
): ActionResult {
  const request = { fingerprint, by: who.label, via: 'slack' as const, now };
  const result = action === 'acknowledge' ? acknowledge(deps.store, request) : unacknowledge(deps.store, request);
  const text = acknowledgeText(result);
  switch (result.outcome) {
    case 'acknowledged':
    case 'unacknowledged':
      deps.log.info(
        { fingerprint, by: who.label, channel: who.channel, event: result.event.id },
        action === 'acknowledge' ? 'alert acknowledged in Slack' : 'alert acknowledgement given back in Slack',
      );
      deps.wake();
      return {
        outcome: 'done',
        text,
        note:
          result.outcome === 'acknowledged'
            ? `Acknowledged by ${who.label} in Slack`
            : `Acknowledgement by ${result.ended.by} given back by ${who.label} in Slack`,
      };
    case 'already_acknowledged':
    case 'not_acknowledged':
      return { outcome: 'unchanged', text };
    case 'not_firing':
    case 'not_found':
      return { outcome: 'stale', text };
  }
}

function silenceAction({ deps, fingerprint, who, now }: Click, action: 'silence_1h' | 'silence_4h'): ActionResult {
  const alert = alertStoreOf(deps.store).get(fingerprint);
  const over = overText(alert, 'silence');
  if (over || !alert) return { outcome: 'stale', text: over ?? 'There is no such alert any more: nothing changed.' };
  const { durationMs, label } = SILENCE_BUTTONS[action];
  const matchers = silenceMatchersFor(alert);
  if (matchers === null) {
    return {
      outcome: 'unchanged',
      text: 'No silence covers this alert alone (it names no app): nothing changed; silence it in the console, choosing the matchers.',
    };
  }
  const until = now + durationMs;
  const existing = activeSilenceFor(deps.store, alert.labels, now);
  if (existing && existing.endsAt >= until) {
    return {
      outcome: 'unchanged',
      text: `Already silenced until ${formatUtc(existing.endsAt)} by ${existing.createdBy} (silence ${existing.id}): nothing changed.`,
    };
  }
  const silence = createSilence(deps.store, {
    matchers,
    durationMs,
    reason: `${label} from Slack (${who.channel}), on alert ${alertId(fingerprint)}: ${alert.summary}`,
    createdBy: `slack:${who.label}`,
    now,
  });
  deps.log.info(
    { silence: silence.id, matchers: describeMatchers(silence.matchers), by: silence.createdBy, channel: who.channel },
    'silence created in Slack',
  );
  const config = deps.commandConfigFile === undefined ? [] : ['--config', deps.commandConfigFile];
  // The command as the messages write theirs: one that pastes from a clone or a systemd install.
  const unsilence = commandLine(['deploy-watchdog', 'unsilence', ...config, silence.id]).line;
  return {
    outcome: 'done',
    text:
      `Silenced for ${formatDuration(durationMs)}, until ${formatUtc(silence.endsAt)} (silence ${silence.id}: ` +
      `${silence.matchers.map(formatMatcher).join(', ')}). End it early in the console` +
      (unsilence === null ? '.' : ` or with ${unsilence}`),
    note: `Silenced for ${formatDuration(durationMs)} by ${who.label} in Slack, until ${formatUtc(silence.endsAt)} (silence ${silence.id})`,
  };
}

function remediateAction({ deps, fingerprint, who, now }: Click): ActionResult {
  if (!deps.remediation) return { outcome: 'unchanged', text: NO_POLICY_TEXT };
  const r = deps.remediation.request(fingerprint, `slack:${who.label}`, now);
  if (r.outcome === 'planned') {
    return {
      outcome: 'done',
      text: `${r.action.words.request}: attempt ${r.attempt} of ${r.maxAttempts} of policy ${r.policy} is being sent (idempotency key ${r.key}); its outcome will be said in this message's thread.`,
      note: `${r.action.words.request} asked by ${who.label} in Slack: attempt ${r.attempt} of ${r.maxAttempts} (key ${r.key})`,
    };
  }
  // An alert over or gone is a stale click; the rest the policy decided against.
  const stale = r.outcome === 'not_firing' || r.outcome === 'not_found';
  return { outcome: stale ? 'stale' : 'unchanged', text: unsentText(r) };
}

/** What a click on an alert no longer firing is told, or undefined while it fires. */
function overText(alert: AlertRow | undefined, what: string): string | undefined {
  return alert && alert.status !== 'firing' ? notFiringText(alert, what) : undefined;
}
