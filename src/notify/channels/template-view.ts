/**
 * What a message template sees (`message-template.ts` declares the fields, README "Templates" lists
 * them): the description every channel shares (`describe.ts`), as plain data. Values are API text
 * and our words, unescaped: the template's escaper makes them safe for the channel's medium when
 * they are printed. Absent values are empty strings (never missing: Mustache would look further
 * out and could find another level's field of the same name); labels are objects without a
 * prototype, so no name reaches anything but a label.
 */
import { isAcknowledgementKind, type AlertEvent } from '../../alerts/alert-event.js';
import type { AlertsNotification, NoticeNotification, RenderOptions } from './channel.js';
import { describeAlerts, TONES, type AlertsDescription, type EventDescription, type Tone } from './describe.js';
import { consoleLink } from './console-link.js';
import { oneLine, plainText, safeHttpUrl } from './escape.js';
import { incidentDetails, type IncidentOptions } from './incident-parts.js';
import type { ValueEscaper } from './message-template.js';
import type { ChannelTemplates } from './template-config.js';

/** What the views need besides the description: the channel's name, and what details are made from. */
export interface ViewOptions extends IncidentOptions {
  channelName: string;
}

/** A message's view, and its alerts' views (each the innermost level of that alert's `text`). */
export type MessageView = Record<string, unknown> & { events: object[] };

/** The view of a whole message: the fields of `MESSAGE_FIELDS`. */
export function messageView(n: AlertsNotification, d: AlertsDescription, o: ViewOptions): MessageView {
  const h = d.headline;
  return {
    ...toneView(h.tone),
    headline: [...h.counts, ...(h.about ? [h.about] : []), ...h.scope].join(' · '),
    counts: h.counts.join(', '),
    what: h.what,
    about: h.about ?? '',
    scope: h.scope.join(', '),
    channel: o.channelName,
    alert_count: n.events.length,
    omitted: d.omitted,
    group: labelsOf(n.group),
    events: d.events.map((e, i) => eventView(n.events[i]!, e, { ...o, routes: n.routes }, i, d.events.length)),
    next_steps: [...d.nextSteps],
    silence_command: d.silenceCommand ?? '',
    acknowledgement: acknowledgementOf(n.events),
  };
}

/**
 * An alerts notification as a kind renders it: its description, its view, and the templates it
 * renders with (the channel's own over `own`, the kind's defaults).
 */
export function describedAlerts(n: AlertsNotification, o: RenderOptions, own: ChannelTemplates) {
  const d = describeAlerts(n, o.now, { commandConfigFile: o.commandConfigFile, links: o.links });
  return { d, view: messageView(n, d, o), templates: { ...own, ...o.templates } };
}

/**
 * What a message that says only an acknowledgement (or its giving back) is about: the state a
 * channel that cannot edit its message (Teams) shows in the new one's header.
 */
function acknowledgementOf(events: readonly AlertEvent[]): string {
  const kinds = new Set(events.map((e) => e.kind));
  if (kinds.size !== 1 || !isAcknowledgementKind(events[0]!.kind)) return '';
  const by = [...new Set(events.map((e) => e.acknowledgement?.by ?? 'someone'))].join(', ');
  return `${kinds.has('acknowledged') ? 'ACKNOWLEDGED' : 'ACKNOWLEDGEMENT GIVEN BACK'} by ${by}`;
}

/** The view of one alert of a message (`index` of `count`): the fields of `EVENT_FIELDS`. */
export function eventView(e: AlertEvent, d: EventDescription, o: ViewOptions, index = 0, count = 1): object {
  const view = {
    kind: e.kind,
    firing: e.kind !== 'resolved',
    resolved: e.kind === 'resolved',
    severity: e.severity,
    ...toneView(d.tone),
    status: d.status,
    summary: d.summary,
    brief: d.brief,
    check: e.check,
    fingerprint: e.fingerprint,
    app: d.app ?? '',
    url: safeHttpUrl(d.url) ?? '',
    page_url: (d.page && safeHttpUrl(d.page.url)) ?? '',
    page_label: d.page?.label ?? '',
    console_url: consoleLink(o.consoleUrl, e.fingerprint) ?? '',
    since: d.since?.utc ?? '',
    ago: d.since?.ago ?? '',
    resolution: d.resolution ?? '',
    acknowledged_by: e.acknowledgement?.by ?? '',
    labels: labelsOf(e.labels),
    facts: positioned(d.facts.map((f) => ({ label: f.label, value: f.value }))),
    first: index === 0,
    last: index === count - 1,
  };
  // Made only when a template asks: most never do, and they take a second description.
  Object.defineProperty(view, 'details', {
    enumerable: true,
    get: () => positioned(Object.entries(incidentDetails(e, o)).map(([label, value]) => ({ label, value }))),
  });
  return view;
}

/**
 * The views of one alert on its own (PagerDuty and Opsgenie make one incident of each): the
 * message it would be alone, then the alert.
 */
export function alertViews(e: AlertEvent, o: ViewOptions): [MessageView, object] {
  const n: AlertsNotification = { type: 'alerts', group: {}, events: [e], omitted: 0, routes: [...(o.routes ?? [])] };
  const view = messageView(n, describeAlerts(n, o.now, { links: o.links }), o);
  return [view, view.events[0]!];
}

/** The view of a notice: the fields of `NOTICE_FIELDS`. */
function noticeView(n: NoticeNotification, channelName: string): object {
  return {
    topic: n.topic,
    title: n.title,
    severity: n.severity ?? '',
    ...toneView(n.severity ?? 'info'),
    fields: positioned((n.fields ?? []).map((f) => ({ label: f.label, value: f.value }))),
    lines: [...(n.lines ?? [])],
    url: safeHttpUrl(n.url) ?? '',
    channel: channelName,
  };
}

/** A notice's title by the channel's `notice_title` template, else by its kind's own (`own`). */
export function noticeTitle(
  n: NoticeNotification,
  o: { templates?: ChannelTemplates | undefined; channelName?: string | undefined },
  own: ChannelTemplates,
  escape: ValueEscaper,
): string {
  return (o.templates?.notice_title ?? own.notice_title)!.render([noticeView(n, o.channelName ?? '')], escape);
}

/**
 * What a template prints as one plain line of at most `max` characters (a subject, a summary): every
 * value through plainText, which turns CR, LF and every control character into a space, and the
 * whole once more through oneLine.
 */
export function plainLine(print: (escape: ValueEscaper) => string, max: number): string {
  const printed = print((v) => plainText(v, max));
  return oneLine(printed, max);
}

/** Labels as an object without a prototype: `labels.constructor` is no label, and finds nothing. */
function labelsOf(labels: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(labels)) if (v !== undefined) out[k] = v;
  return out;
}

/** Items with `first` and `last`, for separators. */
function positioned<T extends object>(items: readonly T[]): (T & { first: boolean; last: boolean })[] {
  return items.map((item, i) => ({ ...item, first: i === 0, last: i === items.length - 1 }));
}

/** A tone as templates see it: its name, its word and its emoji. */
function toneView(tone: Tone): { tone: Tone; tone_word: string; emoji: string } {
  return { tone, tone_word: TONES[tone].word, emoji: TONES[tone].emoji };
}
