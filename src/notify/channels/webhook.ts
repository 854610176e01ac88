/**
 * A generic webhook that POSTs Alertmanager's webhook payload, version 4, so that any receiver
 * built for Alertmanager (an incident tool's Alertmanager integration, a Teams or chat bridge)
 * takes deploy-watchdog's messages as they are. The shape and its meaning follow Alertmanager's
 * own code: `notify/webhook/webhook.go` (the `Message`: version, groupKey, truncatedAlerts, and
 * `max_alerts`), `template/template.go` (`Data` and `Alert`: the fields, their JSON names and
 * order, the receiver quoted with `regexp.QuoteMeta`, commonLabels and commonAnnotations as what
 * every alert of the payload shares), `alert/alert.go` (`Alerts`: a firing alert's endsAt is Go's
 * zero time) and `dispatch/dispatch.go` (a group key is the route's key, a colon and the group
 * labels).
 *
 * One payload is one deploy-watchdog message: its group (the route's `group_by` values) is the
 * Alertmanager group, each of its events an alert, and beside them the group's other alerts this
 * channel was told fire and not yet that they are over (`announcedFiring`): like Alertmanager's,
 * a payload says the group whole, so it is `resolved` only when the group's last alert is. The
 * labels and annotations are data: sent in JSON, which escapes what it must, and neither HTML- nor
 * mrkdwn-escaped; what hides or reorders text is written out and control characters are folded,
 * as in every other channel, and only safe http(s) links are sent.
 */
import { Secret } from '../../lib/secret.js';
import { contentHash } from '../../detectors/fingerprint.js';
import { presentationOf } from '../../detectors/registry.js';
import { formatUtc } from '../../lib/format-utc.js';
import type { AlertEvent } from '../../alerts/alert-event.js';
import { announcedFiring } from '../outbox-store.js';
import { NO_LINKS } from '../message-links.js';
import type { AlertsNotification, Channel, ChannelKind, NoticeNotification, Notification } from './channel.js';
import { renderOptionsOf, type RenderOptions } from './channel.js';
import { postingChannel, urlSecrets } from './http-post.js';
import { cutSayingHowMuch, describeEvent, eventFactList, SHOWN_LIMITS, silenceCommand } from './describe.js';
import type { EventDescription } from './describe.js';
import { oneLine, safeHttpUrl } from './escape.js';
import { webhookConfigSchema, type WebhookConfig } from './webhook-config.js';

/** Alertmanager's webhook payload version. */
export const PAYLOAD_VERSION = '4';

/** Go's zero time as Alertmanager sends it: the endsAt of an alert still firing. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The `alertname` of a notice (a test, the digest, a remediation outcome): no check's name. */
export const NOTICE_ALERTNAME = 'notice';

/** One alert of the payload (Alertmanager's `template.Alert`). */
export interface AlertmanagerAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** RFC 3339. */
  startsAt: string;
  /** RFC 3339; {@link ZERO_TIME} while firing. */
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** The payload (Alertmanager's `webhook.Message`: `template.Data` and its own three fields), in its JSON order. */
export interface AlertmanagerMessage {
  receiver: string;
  status: 'firing' | 'resolved';
  alerts: AlertmanagerAlert[];
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  version: typeof PAYLOAD_VERSION;
  groupKey: string;
  truncatedAlerts: number;
}

/**
 * What rendering needs besides the notification; all from config or the clock. `now` is also a
 * notice's time; `channelName` is the payload's receiver and its group key's route part.
 */
export interface WebhookRenderOptions extends RenderOptions {
  /** The payload's externalURL; empty when not configured. */
  externalUrl: string;
  /** Alertmanager's `max_alerts`; 0: no limit. */
  maxAlerts: number;
  /**
   * The latest event of each alert this channel was told fires and not yet that it is over
   * (`announcedFiring`): those of the message's group that it does not carry are sent beside its
   * events, as Alertmanager sends a group whole. Absent: the message's events alone.
   */
  announcedFiring?: readonly AlertEvent[] | undefined;
  /** `notify.max_items_per_message`: how many alerts a payload carries before it counts the rest. Absent: no cap. */
  maxItems?: number | undefined;
}

/** Builds the payload for a notification. Pure. */
export function renderWebhook(n: Notification, o: WebhookRenderOptions): AlertmanagerMessage {
  if (n.type === 'notice') {
    const alert = noticeAlert(n, o.now);
    return message(o, [alert], { alertname: NOTICE_ALERTNAME, topic: alert.labels.topic! }, 0);
  }
  // The group's alerts still firing that this message does not carry, so that `status` says the
  // group (a receiver closes its incident on `resolved`) and `alerts` holds it whole.
  const carried = new Set([...n.events, ...(n.omittedEvents ?? [])].map((e) => e.fingerprint));
  const stillFiring = (o.announcedFiring ?? []).filter(
    (e) => !carried.has(e.fingerprint) && Object.entries(n.group).every(([k, v]) => e.labels[k] === v),
  );
  // They fill the message up to notify.max_items_per_message, as its own events do; the rest are counted.
  const events = asTheyAreNow(n.events);
  const room = Math.max(0, (o.maxItems ?? Infinity) - events.length);
  const all = [...events, ...stillFiring.slice(0, room)].map((e) => eventAlert(e, n, o));
  const kept = o.maxAlerts > 0 ? all.slice(0, o.maxAlerts) : all;
  // Left out: by max_alerts here, and by notify.max_items_per_message before (the message's "and N
  // more") and for the still-firing ones.
  const unsent = Math.max(0, stillFiring.length - room);
  const truncated = all.length - kept.length + Math.max(0, n.omitted) + unsent;
  const group = mapValues(n.group, text);
  const msg = message(o, kept, group, truncated);
  // The group fires while any of its alerts does, those left out included (they are sorted after
  // the shown ones, so this only matters when a cut kept none of the firing ones).
  const omittedFiring = Math.max(0, n.omitted) - Math.max(0, n.omittedResolved ?? 0);
  if (omittedFiring > 0 || unsent > 0 || all.some((a) => a.status === 'firing')) msg.status = 'firing';
  return msg;
}

/**
 * Each alert once, by its latest event, as Alertmanager lists an alert: a firing and its resolve
 * that waited together (the receiver down) say it resolved, not the group firing. In their order.
 */
function asTheyAreNow(events: readonly AlertEvent[]): AlertEvent[] {
  const latest = new Map<string, AlertEvent>();
  for (const e of events) if (e.id > (latest.get(e.fingerprint)?.id ?? -Infinity)) latest.set(e.fingerprint, e);
  return events.filter((e) => latest.get(e.fingerprint) === e);
}

/** The payload around its alerts. */
function message(
  o: WebhookRenderOptions,
  alerts: AlertmanagerAlert[],
  groupLabels: Record<string, string>,
  truncatedAlerts: number,
): AlertmanagerMessage {
  return {
    receiver: quoteMeta(o.channelName),
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    alerts,
    groupLabels,
    commonLabels: common(alerts.map((a) => a.labels)),
    commonAnnotations: common(alerts.map((a) => a.annotations)),
    externalURL: o.externalUrl,
    version: PAYLOAD_VERSION,
    groupKey: groupKey(o.channelName, groupLabels),
    truncatedAlerts,
  };
}

/**
 * The group key, in Alertmanager's form: the route's key, a colon, the group labels as a label set
 * (`{}/{channel="pagerduty"}:{check="failed_runs", environment_type="production"}`). Where
 * Alertmanager's route key has the route's matchers, this one names the channel: deploy-watchdog
 * groups a channel's messages by the group labels alone, whichever route sent them, so the key is
 * the same for every message of a group from its first firing to its resolve, and two channels
 * posting to one receiver never share a group.
 */
function groupKey(channel: string, groupLabels: Readonly<Record<string, string>>): string {
  return `{}/${labelSet({ channel })}:${labelSet(groupLabels)}`;
}

/**
 * A label set as Prometheus writes one (`model.LabelSet.String`): names sorted, `name="value"`,
 * joined by ", ". Values are quoted as JSON strings, as Go's %q quotes any printable text.
 */
function labelSet(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort();
  return `{${names.map((name) => `${name}=${JSON.stringify(labels[name])}`).join(', ')}}`;
}

/** Go's `regexp.QuoteMeta`, which Alertmanager applies to the receiver's name. */
function quoteMeta(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

/** What every one of the maps holds with the same value (Alertmanager's commonLabels, commonAnnotations). */
function common(maps: readonly Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = maps;
  if (!first) return {};
  return Object.fromEntries(Object.entries(first).filter(([k, v]) => rest.every((m) => m[k] === v)));
}

/** One event as an Alertmanager alert. */
function eventAlert(e: AlertEvent, n: AlertsNotification, o: WebhookRenderOptions): AlertmanagerAlert {
  const d = describeEvent(e, o.now, new Set(), o.links);
  const resolved = e.kind === 'resolved';
  return {
    status: resolved ? 'resolved' : 'firing',
    labels: labelsOf(e),
    annotations: annotationsOf(e, d, n, o),
    startsAt: rfc3339(e.startsAt, e.at),
    endsAt: resolved ? rfc3339(e.endsAt ?? e.at, e.at) : ZERO_TIME,
    // What caused it: the platform's page of its record (Prometheus links its rule's graph here).
    generatorURL: safeHttpUrl(d.page?.url) ?? '',
    fingerprint: e.fingerprint,
  };
}

/**
 * The alert's labels, with the two every Alertmanager receiver reads: `alertname` (its check) and
 * `severity`, unless a label of its own already says them.
 */
function labelsOf(e: AlertEvent): Record<string, string> {
  const labels: Record<string, string> = { alertname: e.check, severity: e.severity };
  for (const [name, value] of Object.entries(e.labels)) if (value !== undefined) labels[name] = value;
  return mapValues(labels, text);
}

/**
 * What a reader is told of the alert, as Alertmanager's usual annotations: `summary`, a
 * `description` of one fact a line, `runbook_url`, and ours beside them (`next_step`, `url`,
 * `silence`, `log`); each only when it says something.
 */
function annotationsOf(
  e: AlertEvent,
  d: EventDescription,
  n: AlertsNotification,
  o: WebhookRenderOptions,
): Record<string, string> {
  const links = o.links ?? NO_LINKS;
  const firing = e.kind !== 'resolved';
  const routeRunbook = (n.routes ?? []).map((r) => links.routeRunbooks[r]).find((url) => url !== undefined);
  // None once resolved, as silenceCommand says of a message with no alert firing.
  const silence = silenceCommand({ ...n, events: [e], omitted: 0 }, o.commandConfigFile);
  const entries: [string, string | null | undefined][] = [
    // Cut to what a reader reads, as every channel cuts it (describe.ts SHOWN_LIMITS).
    ['summary', text(cutSayingHowMuch(e.summary, SHOWN_LIMITS.summary))],
    ['description', description(d)],
    ['runbook_url', safeHttpUrl(links.checkRunbooks[e.check] ?? routeRunbook)],
    ['next_step', firing ? presentationOf(e.check)?.nextStep?.(e) : null],
    ['url', safeHttpUrl(e.url)],
    // A shell line, whole and unchanged: it was built to be shown (`commandLine`), or is null.
    ['silence', silence],
    ['log', d.context?.log ? logText(d.context.log) : null],
  ];
  return Object.fromEntries(entries.filter((entry): entry is [string, string] => !!entry[1]));
}

/** The facts of an event, one a line: status, what was wrong once resolved, then its facts as every channel lists them. */
function description(d: EventDescription): string {
  const lines = d.tone === 'resolved' ? [d.status, d.summary] : [d.status];
  for (const f of eventFactList(d)) lines.push(`${f.label}: ${f.value}`);
  // Each line folded to one, so a line break in the service's text cannot make a line of ours.
  return lines.map((l) => text(l)).join('\n');
}

/** The log excerpt: its title, then its lines with their UTC times. */
function logText(log: NonNullable<NonNullable<EventDescription['context']>['log']>): string {
  const lines = log.lines.map((l) => text(l.stamp ? `${l.stamp}  ${l.text}` : l.text));
  return [text(log.title), ...lines].join('\n');
}

/** A notice as an alert already over: no receiver opens an incident that nothing would close. */
function noticeAlert(n: NoticeNotification, now: number): AlertmanagerAlert {
  const at = formatUtc(now, 'iso');
  const severity = n.severity === 'info' || n.severity === 'warning' || n.severity === 'critical' ? n.severity : null;
  const lines = [...(n.fields ?? []).map((f) => `${f.label}: ${f.value}`), ...(n.lines ?? [])];
  const annotations: Record<string, string> = { summary: text(n.title) };
  if (lines.length > 0) annotations.description = lines.map((l) => text(l)).join('\n');
  return {
    status: 'resolved',
    labels: mapValues({ alertname: NOTICE_ALERTNAME, topic: n.topic, ...(severity ? { severity } : {}) }, text),
    annotations,
    startsAt: at,
    endsAt: at,
    generatorURL: safeHttpUrl(n.url) ?? '',
    // The same notice, sent again after a failure, is the same alert.
    fingerprint: `notice/${contentHash({ topic: n.topic, title: n.title, fields: n.fields, lines: n.lines })}`,
  };
}

/**
 * Text from the service as data: JSON escapes what it must, so only what would fool a reader is
 * changed, as everywhere: control characters (a line break) folded to a space, hidden ones
 * written out. Never cut: a label is an identity.
 */
function text(value: string): string {
  return oneLine(value, Number.POSITIVE_INFINITY);
}

function mapValues(record: Readonly<Record<string, string>>, f: (v: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]));
}

/** An ISO 8601 time as RFC 3339 in UTC ("2026-11-01T10:00:00Z"); `fallback` when it cannot be read. */
function rfc3339(value: string, fallback: string): string {
  const at = Date.parse(value);
  if (Number.isFinite(at)) return formatUtc(at, 'iso');
  const other = Date.parse(fallback);
  return Number.isFinite(other) ? formatUtc(other, 'iso') : ZERO_TIME;
}

/** Every Secret of a webhook config, for scrubbing reasons and logs. */
function secretsOf(config: WebhookConfig): Secret[] {
  return [
    // A library may print the URL re-serialised, or only its path and query: where a token sits.
    ...urlSecrets(config.url),
    ...Object.values(config.headers ?? {}),
    ...(config.bearer_token ? [config.bearer_token] : []),
    ...(config.basic_auth ? [config.basic_auth.password, new Secret(basicCredentials(config.basic_auth))] : []),
  ];
}

/** The base64 credentials of a basic-auth header (RFC 7617). */
function basicCredentials(auth: { username: string; password: Secret }): string {
  return Buffer.from(`${auth.username}:${auth.password.reveal()}`, 'utf8').toString('base64');
}

/** The request's headers, secrets revealed: built at each send, never kept or logged. */
function requestHeaders(config: WebhookConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) headers[name.toLowerCase()] = value.reveal();
  if (config.bearer_token) headers.authorization = `Bearer ${config.bearer_token.reveal()}`;
  if (config.basic_auth) headers.authorization = `Basic ${basicCredentials(config.basic_auth)}`;
  return headers;
}

/** The webhook channel kind: Alertmanager's webhook payload, version 4. */
export const webhookChannel = {
  configSchema: webhookConfigSchema,
  create(config, deps): Channel<AlertmanagerMessage> {
    return postingChannel(config, deps, 'the webhook', secretsOf(config), {
      render: (n) =>
        renderWebhook(n, {
          ...renderOptionsOf(config, deps),
          externalUrl: config.external_url ?? deps.consoleUrl ?? '',
          maxAlerts: config.max_alerts,
          // Read at each render (a retry renders again): the group as it stands when sent.
          announcedFiring: n.type === 'alerts' && deps.store ? announcedFiring(deps.store, config.name) : undefined,
          maxItems: deps.maxItemsPerMessage,
        }),
      request: (message) => ({ url: config.url.reveal(), headers: requestHeaders(config), body: message }),
    });
  },
} satisfies ChannelKind<WebhookConfig, AlertmanagerMessage>;
