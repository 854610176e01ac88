/**
 * The way back from the on-call tools: PagerDuty's V3 webhooks at `POST /pagerduty/<channel>` and
 * Opsgenie's Webhook integration at `POST /opsgenie/<channel>`, on `server.listen`, for a channel
 * of that kind with a `webhook` section in the config in force. A request is checked before
 * anything in it is read (PagerDuty's signature, Opsgenie's token): a missing or wrong one is
 * refused with 401 and a log line naming the channel and the client, never the secret or what was
 * sent. A checked one is answered 200 whatever it asks, so the tool does not retry what we
 * understood and chose to let be (an event type not used, an alert not ours or long forgotten).
 * An acknowledgement (or its giving back) takes the one path every surface takes
 * (`src/alerts/acknowledge.ts`, `via` the tool, the event naming the channel so it is not told
 * back), and wakes the delivery loop, which shows it where the alert lives (a Slack app's living
 * message, the other channels that show acknowledgements, the console's timeline).
 *
 * PagerDuty groups alerts into one incident (Alert Grouping, Event Orchestration), and its webhook
 * names the incident and its first alert only. With the channel's `webhook.api_key`, a request of
 * an incident is answered 200 at once (PagerDuty retries a slow answer), then the incident's alerts
 * are read from the REST API within the channel's `timeout` (at most {@link MAX_GROUP_READ_MS}),
 * and the act is done on each of ours among them, once each; when they cannot be read, on the one
 * alert named, said at warn. Without the key: the one alert named, as said once at the start.
 *
 * A request taken is remembered by its id (PagerDuty's event id; a digest of Opsgenie's body) for
 * a while, so a replay of it changes nothing; the acts are idempotent anyway. An act older than
 * what happened since (a late delivery, a replay after a restart; by PagerDuty's `occurred_at`,
 * Opsgenie's `updatedAt`) is answered and let be. One that could not be carried out (answered 500:
 * the state could not be written) is forgotten, so the tool's retry is taken.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { acknowledge, unacknowledge } from '../alerts/acknowledge.js';
import type { AcknowledgeSurface } from '../alerts/alert-event.js';
import { alertStoreOf, eventsOfAlert } from '../alerts/alert-store.js';
import type { Config } from '../config/load-config.js';
import type { Clock } from '../lib/clock.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import type { Logger } from '../lib/logger.js';
import type { Secret } from '../lib/secret.js';
import { answerJson } from '../lib/answer-json.js';
import { readPost } from '../lib/read-body.js';
import { oneLine } from '../notify/channels/escape.js';
import { apiRoot } from '../notify/channels/on-call-config.js';
import { incidentKey } from '../notify/channels/incident-parts.js';
import { OPSGENIE_LIMITS } from '../notify/channels/opsgenie.js';
import { PAGERDUTY_LIMITS } from '../notify/channels/pagerduty.js';
import { PAGERDUTY_REST_REGIONS } from '../notify/channels/pagerduty-config.js';
import type { ChannelConfig } from '../notify/channels/registry.js';
import type { Store } from '../state/store.js';
import type { OnCallAct, OnCallRead } from './on-call-act.js';
import { ReplayMemory } from './replay-memory.js';
import { readOpsgenieWebhook, verifyOpsgenieToken } from './opsgenie-webhook.js';
import { readIncidentAlerts, type IncidentAlertsRead } from './pagerduty-incident-alerts.js';
import { readPagerDutyWebhook, verifyPagerDutySignature } from './pagerduty-webhook.js';

/** The largest body taken: an incident's or an alert's webhook is a few kilobytes. */
const MAX_BODY_BYTES = 512 * 1024;
/** How many requests are remembered against replays (the oldest forgotten first). */
const REMEMBERED = 2_048;
/** The longest name kept of who acted in the tool (the alert store takes up to 200). */
const MAX_BY = 120;
/** The longest channel name a log line repeats from a path: anyone may send any path. */
const MAX_NAME_LOGGED = 100;
/** The longest read of a grouped incident's alerts, all its pages: PagerDuty's webhook does not wait on it, the alerts' repeats do. */
const MAX_GROUP_READ_MS = 5_000;

/** What the handler works with; `config` is read at each request, so a reload needs no restart. */
export interface OnCallWebhookDeps {
  config(): Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Wakes the delivery loop, to show the acknowledgement now. */
  wake?(): void;
}

/** One tool's webhook: how a request is checked and read. */
interface ToolWebhook {
  surface: Extract<AcknowledgeSurface, 'pagerduty' | 'opsgenie'>;
  /** Its name in logs and the name of who acted when it names nobody. */
  label: string;
  /** The longest key the channel sends before hashing (`incidentKey`). */
  keyLimit: number;
  /** The channel's webhook secret (PagerDuty's signing secret, Opsgenie's token); undefined: it takes no webhook. */
  secret(channel: ChannelConfig): Secret | undefined;
  verify(headers: IncomingHttpHeaders, body: string, secret: Secret): boolean;
  read(body: string): OnCallRead;
  /**
   * How to read the keys of the alerts the act's incident groups, where the channel can
   * (PagerDuty's REST API key); undefined: the act is of the one alert its key names.
   */
  group?(channel: ChannelConfig, wanted: OnCallAct): (() => Promise<IncidentAlertsRead>) | undefined;
}

const TOOLS: Readonly<Record<string, ToolWebhook>> = {
  pagerduty: {
    surface: 'pagerduty',
    label: 'PagerDuty',
    keyLimit: PAGERDUTY_LIMITS.dedupKey,
    secret: (channel) => (channel.type === 'pagerduty' ? channel.webhook?.signing_secret : undefined),
    verify: verifyPagerDutySignature,
    read: readPagerDutyWebhook,
    group: (channel, wanted) => {
      const apiKey = channel.type === 'pagerduty' ? channel.webhook?.api_key : undefined;
      if (channel.type !== 'pagerduty' || !apiKey || !wanted.incident) return undefined;
      const root = apiRoot(channel.webhook?.api_url ?? PAGERDUTY_REST_REGIONS[channel.region]);
      const timeoutMs = Math.min(channel.timeout, MAX_GROUP_READ_MS);
      return () => readIncidentAlerts({ root, incident: wanted.incident!, apiKey, timeoutMs });
    },
  },
  opsgenie: {
    surface: 'opsgenie',
    label: 'Opsgenie',
    keyLimit: OPSGENIE_LIMITS.alias,
    secret: (channel) => (channel.type === 'opsgenie' ? channel.webhook?.token : undefined),
    verify: (headers, _body, secret) => verifyOpsgenieToken(headers, secret),
    read: readOpsgenieWebhook,
  },
};

/**
 * Says, once per PagerDuty channel whose webhook has no `api_key`, that an incident grouping several
 * alerts acknowledges here only the one it is named after, and what to set (when the listener starts).
 */
export function sayUngroupedWebhooks(config: Config, logger: Logger): void {
  for (const channel of config.notify.channels) {
    if (channel.type !== 'pagerduty' || !channel.webhook || channel.webhook.api_key) continue;
    logger.info(
      { channel: channel.name, stage: 'on-call-webhook' },
      'PagerDuty webhook without api_key: an incident grouping several alerts acknowledges here only the alert it is named after; set webhook.api_key to a read-only REST API key to acknowledge each',
    );
  }
}

/** `/pagerduty/<name>` or `/opsgenie/<name>`: the tool and the channel's name. */
const PATH = /^\/(pagerduty|opsgenie)\/([^/]+)$/;

/**
 * The handler of the on-call tools' webhooks: true when the path is one of theirs (answered),
 * false to leave the request to the next handler.
 */
export function onCallWebhookHandler(deps: OnCallWebhookDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  // Each kept until it is one of the oldest past the bound: the tools give their posts no end.
  const seen = new ReplayMemory(REMEMBERED);
  const log = deps.logger.child({ stage: 'on-call-webhook' });
  // Anyone can post here: a refusal is said once a minute with a count, never once a request.
  const refusals = new RepeatedLog(log, { clock: deps.clock });
  const logged = (name: string) => (name.length > MAX_NAME_LOGGED ? `${name.slice(0, MAX_NAME_LOGGED)}...` : name);

  // The time of the newest act taken from each tool's alert, against one delivered late (or replayed after a restart).
  const newest = new Map<string, number>();

  const take = (req: IncomingMessage, res: ServerResponse, tool: ToolWebhook, name: string, body: string) => {
    const channel = deps.config().notify.channels.find((c) => c.name === name && c.type === tool.surface);
    const remote = req.socket.remoteAddress;
    const refuse = (status: number, error: string, why: string) => {
      refusals.warn({ channel: logged(name), remote }, `${tool.label} webhook refused: ${why}`);
      answerJson(res, status, { error });
    };
    const secret = channel && tool.secret(channel);
    if (!channel || !secret || !tool.verify(req.headers, body, secret)) {
      return refuse(401, 'unauthorized', `no valid ${tool.surface === 'pagerduty' ? 'signature' : 'token'}`);
    }
    const read = tool.read(body);
    if (!read.ok) return refuse(400, 'unreadable', read.reason);
    const key = `${tool.surface}/${name}/${read.id}`;
    if (seen.seen(key, Infinity, 0)) {
      log.debug({ channel: name, id: read.id }, `${tool.label} webhook taken before: ignored`);
      return answerJson(res, 200, { ignored: 'duplicate' });
    }
    if (!read.act) {
      log.debug({ channel: name, what: read.what }, `${tool.label} webhook not used`);
      return answerJson(res, 200, { ignored: 'not used' });
    }
    const group = tool.group?.(channel, read.act);
    if (group) {
      answerJson(res, 200, { outcome: 'accepted' });
      void actOnGroup(tool, name, read.act, group).catch((err: unknown) => {
        seen.forget(key);
        log.error({ err, channel: name }, `${tool.label} webhook failed`);
      });
      return;
    }
    try {
      answerJson(res, 200, act(tool, name, read.act));
    } catch (err) {
      // Not carried out (the state could not be written): the tool's retry of this post must be taken.
      seen.forget(key);
      throw err;
    }
  };

  /**
   * Does what the tool asks of each of our alerts in the act's incident (read by `group`), once
   * each; of the one its key names when they cannot be read.
   */
  const actOnGroup = async (
    tool: ToolWebhook,
    name: string,
    wanted: OnCallAct,
    group: () => Promise<IncidentAlertsRead>,
  ): Promise<void> => {
    const read = await group();
    const incident = wanted.incident;
    if (!read.ok) {
      log.warn(
        { channel: name, incident },
        `${tool.label} webhook: the incident's alerts could not be read (${read.reason}): only the alert it is named after is taken`,
      );
      act(tool, name, wanted);
      return;
    }
    // The named alert first, as without the key; each key once.
    const keys = new Set([wanted.key, ...read.keys]);
    const outcomes = [...keys].map((key) => act(tool, name, { ...wanted, key }).outcome);
    const ours = outcomes.filter((o) => o !== 'not_found').length;
    const said = { channel: name, incident, alerts: read.alerts, ours };
    if (read.complete) log.info(said, `${tool.label} webhook: the incident's alerts read`);
    else log.warn(said, `${tool.label} webhook: the incident's alerts read in part (too many): the rest are not taken`);
  };

  /** Does what the tool asks of the alert its key names, and says what happened. */
  const act = (tool: ToolWebhook, name: string, wanted: OnCallAct): { outcome: string } => {
    const fingerprint = fingerprintOf(wanted.key, tool.keyLimit);
    if (fingerprint === undefined) {
      log.debug({ channel: name }, `${tool.label} webhook for an alert not ours (or forgotten): ignored`);
      return { outcome: 'not_found' };
    }
    if (wanted.at !== undefined && stale(`${tool.surface}/${name}/${fingerprint}`, fingerprint, wanted.at)) {
      log.debug({ channel: name, fingerprint }, `${tool.label} webhook older than what happened since: ignored`);
      return { outcome: 'stale' };
    }
    const request = {
      fingerprint,
      by: oneLine(wanted.by, MAX_BY) || tool.label,
      via: tool.surface,
      channel: name,
      now: deps.clock.now(),
    };
    const done = wanted.act === 'acknowledge' ? acknowledge(deps.store, request) : unacknowledge(deps.store, request);
    if (done.outcome === 'acknowledged' || done.outcome === 'unacknowledged') deps.wake?.();
    log.info(
      { channel: name, fingerprint, by: request.by, outcome: done.outcome },
      `${tool.label} webhook: ${wanted.act}`,
    );
    return { outcome: done.outcome };
  };

  /**
   * Whether an act done in the tool at `at` is older than what is known since: a newer act taken
   * from the tool, or the alert's last start, acknowledgement or giving back here. The tool
   * delivers at least once and in no promised order, so a late "acknowledged" must not take back
   * an alert given back since. The act is remembered as the newest when it is not.
   */
  const stale = (key: string, fingerprint: string, at: number): boolean => {
    const here = eventsOfAlert(deps.store, fingerprint)
      .filter((e) => e.kind === 'firing' || e.kind === 'acknowledged' || e.kind === 'unacknowledged')
      .map((e) => Date.parse(e.at));
    if (at < Math.max(newest.get(key) ?? -Infinity, ...here)) return true;
    newest.delete(key);
    newest.set(key, at);
    if (newest.size > REMEMBERED) newest.delete(newest.keys().next().value as string);
    return false;
  };

  /** The alert a key names: the fingerprint itself, or the one whose hash it is. */
  const fingerprintOf = (key: string, limit: number): string | undefined => {
    const alerts = alertStoreOf(deps.store);
    if (alerts.get(key)) return key;
    if (!key.startsWith('sha256:')) return undefined;
    return alerts.fingerprintsWhere((fp) => fp.length > limit && incidentKey(fp, limit) === key)[0];
  };

  return (req, res) => {
    const match = PATH.exec((req.url ?? '/').split('?')[0] ?? '/');
    const tool = match ? TOOLS[match[1]!] : undefined;
    if (!match || !tool) return false;
    let name: string;
    try {
      name = decodeURIComponent(match[2]!);
    } catch {
      answerJson(res, 404, { error: 'not found' });
      return true;
    }
    readPost(req, res, MAX_BODY_BYTES, (body) => {
      try {
        take(req, res, tool, name, body);
      } catch (err) {
        log.error({ err, channel: name }, `${tool.label} webhook failed`);
        if (!res.headersSent) answerJson(res, 500, { error: 'internal' });
      }
    });
    return true;
  };
}
