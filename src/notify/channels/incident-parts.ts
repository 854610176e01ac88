/**
 * What the incident tools (PagerDuty, Opsgenie) are told of one alert, worked out once for both:
 * every alert of a message is one incident there, keyed by its fingerprint, with its facts and
 * context as key-value details and its links (console, the platform's page, the app, runbooks).
 * Values are plain text: both take JSON, and neither renders markup in details; control characters
 * are folded and hidden ones written out as everywhere (`oneLine`), and each value is cut.
 *
 * One send carries several requests (one per alert): when one fails, those before it were
 * accepted, and a retry renders the message again. {@link incidentSender} remembers what was
 * accepted, so the retry starts where the failure was and an acknowledgement is not sent twice.
 */
import { createHash } from 'node:crypto';
import type { AlertEvent } from '../../alerts/alert-event.js';
import { NO_LINKS } from '../message-links.js';
import type { Secret } from '../../lib/secret.js';
import type { AlertsNotification, ChannelDeps, NoticeNotification, RenderOptions, SendResult } from './channel.js';
import { describeEvent, type Link } from './describe.js';
import { oneLine, safeLinks } from './escape.js';
import { httpChannelIo, type ChannelRequest } from './http-post.js';
import { consoleLink } from './console-link.js';
import { apiRoot } from './on-call-config.js';

/** What an incident's parts need besides the event. */
export interface IncidentOptions extends Pick<RenderOptions, 'now' | 'links' | 'consoleUrl'> {
  /** The routes that sent it (their runbooks are linked). */
  routes?: readonly string[] | undefined;
}

/** Longest value of one detail: a reader's screen, not an archive (the log is several lines). */
const DETAIL_MAX = 1_000;

/** Every alert of a message, those the message's cap left out included: each is its own incident. */
export function alertsOf(n: AlertsNotification): AlertEvent[] {
  return [...n.events, ...(n.omittedEvents ?? [])];
}

/**
 * An alert's key in the tool (PagerDuty's dedup_key, Opsgenie's alias): its fingerprint, or where
 * that is longer than the tool takes, a hash of it (the same every time).
 */
export function incidentKey(fingerprint: string, max: number): string {
  if (fingerprint.length <= max) return fingerprint;
  return `sha256:${createHash('sha256').update(fingerprint).digest('hex')}`;
}

/**
 * The alert's details, as the tool shows them beside the incident: its check, the labels that say
 * where, its check's facts, since when, what the API told after the cycle (restore point, log),
 * and who acknowledged it. Keys are our words, values API text folded to one line and cut.
 */
export function incidentDetails(e: AlertEvent, o: IncidentOptions): Record<string, string> {
  const d = describeEvent(e, o.now, new Set(), o.links ?? NO_LINKS);
  const out: Record<string, string> = {};
  const put = (key: string, value: string | null | undefined, max = DETAIL_MAX) => {
    // The first of a key wins: a check's fact named like ours ("Status") does not hide ours.
    if (value && !(key in out)) out[key] = oneLine(value, max);
  };
  put('Status', d.status);
  put('Summary', e.summary);
  put('Check', e.check);
  put('Fingerprint', e.fingerprint);
  for (const [name, value] of Object.entries(e.labels)) put(`Label ${name}`, value);
  for (const f of [...d.where, ...d.facts]) put(f.label, f.value);
  if (d.since) put('Since', d.since.utc);
  if (e.acknowledgement) put('Acknowledged by', `${e.acknowledgement.by} (${e.acknowledgement.via})`);
  if (e.acknowledgement?.comment) put('Comment', e.acknowledgement.comment);
  if (e.resolution) put('Resolution', e.resolution);
  for (const f of d.context?.facts ?? []) put(f.label, f.value);
  (d.context?.notes ?? []).forEach((note, i) => put(`Note ${i + 1}`, note));
  const log = d.context?.log;
  if (log) {
    const lines = log.lines.map((l) => oneLine(l.stamp ? `${l.stamp}  ${l.text}` : l.text, 300));
    // The log keeps its lines: the one value that is several (each folded first).
    out.Log = [oneLine(log.title), ...lines].join('\n');
  }
  for (const link of incidentLinks(e, o)) put(link.label, link.url, 2_000);
  return out;
}

/**
 * The alert's links, each an http(s) URL checked safe: its page in the console, the platform's
 * page of its record, the app, its runbooks (its routes', then its check's), each URL once.
 */
export function incidentLinks(e: AlertEvent, o: IncidentOptions): Link[] {
  const links = o.links ?? NO_LINKS;
  const d = describeEvent(e, o.now, new Set(), links);
  return safeLinks([
    { label: 'Console', url: consoleLink(o.consoleUrl, e.fingerprint) },
    ...(d.page ? [{ label: d.page.label, url: d.page.url }] : []),
    { label: e.labels.app ? 'App' : 'Page', url: e.url },
    ...(o.routes ?? []).map((r) => ({ label: `Runbook: ${r}`, url: links.routeRunbooks[r] })),
    { label: 'Runbook', url: links.checkRunbooks[e.check] },
  ]);
}

/** A notice's text, one line each: its fields, then its lines. */
export function noticeLines(n: NoticeNotification): string[] {
  return [...(n.fields ?? []).map((f) => `${f.label}: ${f.value}`), ...(n.lines ?? [])].map((l) => oneLine(l, 1_000));
}

/** A key for a notice, the same for the same notice sent again. */
export function noticeKey(n: NoticeNotification): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([n.topic, n.title, n.fields ?? [], n.lines ?? []]))
    .digest('hex');
  return `notice/${n.topic}/${hash.slice(0, 16)}`;
}

/** One request of a send, and the key under which its acceptance is remembered. */
export interface KeyedRequest<R> {
  /** The event's id and what is asked ("12:acknowledge"), unique per channel; null: never remembered (a notice). */
  key: string | null;
  request: R;
}

/**
 * What every incident tool's channel does besides rendering: each send makes the message's
 * requests in order, stopping at the first not accepted (its result), each one the HTTP request
 * `toHttp` makes of it under the API root (`api_url`, else the region's); the tool keeps the
 * incident, so it is told who took the alert here.
 *
 * The requests accepted are remembered by key for a while (the most recent {@link REMEMBERED}):
 * a send that failed half-way is rendered again and tried again, and what was accepted before the
 * failure is not asked twice. In memory only: after a restart every request is sent again, which
 * both tools take as the same incident (the same key).
 */
export function incidentSender<R>(
  config: { name: string; type: string; timeout: number; api_url?: string | undefined; region: 'us' | 'eu' },
  deps: ChannelDeps,
  tool: {
    /** Its name in a reason: "PagerDuty". */
    name: string;
    secret: Secret;
    regions: Record<'us' | 'eu', string>;
    /** A refusal of the channel's credential that the tool words as a bad request: every request would meet it. */
    credentialRefused?: { key: string; reason: RegExp };
  },
  toHttp: (request: R, root: string) => Omit<ChannelRequest, 'signal'>,
) {
  const root = apiRoot(config.api_url ?? tool.regions[config.region]);
  const accepted = new Set<string>();
  const io = httpChannelIo(config, deps, tool.name, [tool.secret]);
  return {
    kind: config.type,
    showsAcknowledgements: true,
    // One send may make up to two requests per alert of its message (PagerDuty one), each within the timeout.
    sendTimeoutMs: config.timeout * Math.max(1, deps.maxItemsPerMessage ?? 10) * 2,
    send: (message: readonly KeyedRequest<R>[], signal: AbortSignal | undefined): Promise<SendResult> =>
      io.guarded(async () => {
        for (const { key, request } of message) {
          if (key !== null && accepted.has(key)) continue;
          const result = await io.post({ ...toHttp(request, root), signal });
          const credential = tool.credentialRefused;
          if (result.outcome === 'permanent' && credential?.reason.test(result.reason))
            return {
              ...result,
              reason: `${result.reason}; check ${credential.key} of ${config.name}`,
              wholeChannel: true,
            };
          if (result.outcome !== 'ok') return result;
          if (key === null) continue;
          accepted.add(key);
          if (accepted.size > REMEMBERED) accepted.delete(accepted.values().next().value as string);
        }
        return { outcome: 'ok' };
      }, signal),
    close: io.close,
  };
}

/** How many accepted requests a channel remembers: far more than one message carries. */
const REMEMBERED = 10_000;
