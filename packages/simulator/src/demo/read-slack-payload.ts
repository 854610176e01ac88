/**
 * Turns a Slack webhook payload back into what a person would read in Slack, as plain terminal
 * lines, and into the facts the demo's tally needs (which check, which events fired or resolved).
 * It reads only what the stand-in received: the demo shows the real message, not a copy built
 * beside it.
 */
import type { CheckName } from '../../../../src/detectors/registry.js';
import { CHECK_NAMES } from '../../../../src/detectors/registry.js';
import { describeHeadline } from '../../../../src/notify/channels/describe.js';
import type { SlackLikePayload } from './peers/webhook-receiver.js';

/** One alert event of a message, as shown. */
export interface ReadEvent {
  /** The status word(s): "CRITICAL", "RESOLVED after 12s", "WARNING · still firing". */
  status: string;
  /** true for a resolved event. */
  resolved: boolean;
  summary: string;
  /** The app named in the event, when it names one. */
  app: string | null;
}

/** A Slack message as read back. */
export interface SlackReading {
  /** The header line. */
  title: string;
  /** The check the message is about (from the header's noun), null for notices and mixed groups. */
  check: CheckName | null;
  /** A notice's topic (`remediation`, `test`, …) read from its footer; null for alert messages. */
  topic: string | null;
  events: ReadEvent[];
  /** Everything shown, header first, as plain text lines. */
  lines: string[];
}

/**
 * The check of each singular and plural noun the renderers use ("failed run", "backup problems"),
 * asked of the renderers' own headline function so the two cannot drift apart.
 */
function checkNouns(): Map<string, CheckName> {
  const nouns = new Map<string, CheckName>();
  for (const check of CHECK_NAMES) {
    for (const omitted of [1, 2]) {
      nouns.set(describeHeadline({ type: 'alerts', group: { check }, events: [], omitted }).what, check);
    }
  }
  return nouns;
}

/**
 * Slack mrkdwn as plain text: links show their label (or the bare URL), dates their fallback
 * text, bold markers go, and the three entities are decoded last so escaped text stays literal.
 */
export function mrkdwnToPlain(text: string): string {
  return text
    .replace(/<!date\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<(https?:[^|>]+)\|([^>]*)>/g, '$2')
    .replace(/<(https?:[^>]+)>/g, '$1')
    .replace(/<!(here|channel|everyone)>/g, '@$1')
    .replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s:.,)])/gm, '$1$2')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Reads one payload the Slack stand-in accepted. */
export function readSlackPayload(
  payload: SlackLikePayload,
  nouns: Map<string, CheckName> = checkNouns(),
): SlackReading {
  const blocks = payload.blocks ?? [];
  const header = blocks.find((b) => b.type === 'header')?.text?.text ?? payload.text ?? '';
  const lines: string[] = [header];
  const events: ReadEvent[] = [];
  let topic: string | null = null;
  let check: CheckName | null = null;
  // "🔴 CRITICAL · 2 failed runs · staging": the second part names the check.
  const what = /^(\d+) (.+)$/.exec(header.split(' · ')[1] ?? '')?.[2];
  if (what !== undefined) check = nouns.get(what) ?? null;

  for (const block of blocks) {
    if (block.type === 'section' && typeof block.text?.text === 'string') {
      // A section that is only a link (a notice's "Open") shows where it goes.
      const link = /^<(https?:[^|>]+)\|([^>]*)>$/.exec(block.text.text);
      const text = link ? `${mrkdwnToPlain(link[2] as string)}: ${link[1] as string}` : mrkdwnToPlain(block.text.text);
      // A code block (a log excerpt) reads as its lines: Slack shows no fences.
      const [first = '', ...rest] = text.split('\n').filter((l) => l !== '```');
      lines.push(...[first, ...rest.map((l) => `  ${l}`)]);
      // An event section starts "🔴 CRITICAL · summary" (the status was bold in mrkdwn).
      const event = /^\S+ (.+?) · (.*)$/.exec(first);
      const appLine = rest.map((l) => /(?:^|\s)App: (.+?)(?: {2}· {2}|$)/.exec(l)?.[1]).find((a) => a !== undefined);
      if (check !== null && event && /^(CRITICAL|WARNING|INFO|RESOLVED|ESCALATED)/.test(event[1] ?? '')) {
        const status = event[1] as string;
        events.push({
          status,
          resolved: status.startsWith('RESOLVED'),
          summary: event[2] as string,
          app: appLine ?? null,
        });
      }
    } else if (block.type === 'section' && block.fields) {
      for (const f of block.fields) lines.push(mrkdwnToPlain(f.text ?? '').replace(/\n/g, ': '));
    } else if (block.type === 'context') {
      const text = (block.elements ?? []).map((e) => mrkdwnToPlain(e.text ?? '')).join(' ');
      lines.push(`  ${text}`);
      // A notice's footer ends with its topic: "deploy-watchdog · ops-slack · remediation".
      if (check === null) topic = text.split(' · ').at(-1) ?? null;
    }
  }
  return { title: header, check, topic: check === null ? topic : null, events, lines };
}

/** A reader with the noun table built once, for the many payloads of one demo. */
export function slackPayloadReader(): (payload: SlackLikePayload) => SlackReading {
  const nouns = checkNouns();
  return (payload) => readSlackPayload(payload, nouns);
}
