/**
 * The alerts a PagerDuty incident groups, read from its REST API (`GET /incidents/{id}/alerts`,
 * classic pagination by `limit`, `offset` and `more`), for the way back: Intelligent, Content-based
 * or Time-based Alert Grouping (and Event Orchestration) put several of our alerts in one incident,
 * and its V3 webhook names only the incident and its first alert's key.
 *
 * In PagerDuty, acknowledgement is the incident's: its alerts have no acknowledged status (an
 * alert is `triggered` or `resolved`), and acknowledging the incident stops the notifications of
 * every alert in it, which stay `triggered`. So every alert of the incident not `resolved` is taken
 * as acknowledged (or given back) with it; a resolved one was over before and is let be.
 *
 * The key is sent in the `Authorization` header and never put in a reason: a failure is named by
 * its status or code alone. Every answer is PagerDuty's data: its size, its pages and each alert
 * are bounded and read as text.
 */
import { z } from 'zod';
import { readBody } from '../lib/read-body.js';
import type { Secret } from '../lib/secret.js';
import { undiciErrorCode } from '../notify/channels/http-post.js';
import { request } from '../lib/undici-core.js';
import { readJsonBody } from './on-call-act.js';

/** The page asked for; PagerDuty may answer fewer. Not its largest (100): a page is parsed on the main thread. */
const PAGE_LIMIT = 50;
/** The most pages read: an incident of more alerts is read in part. */
const MAX_PAGES = 10;
/** The largest page answer taken: fifty alerts with their bodies. */
const MAX_PAGE_BYTES = 2 * 1024 * 1024;

/** The keys of the incident's alerts not resolved, or why they could not be read. */
export type IncidentAlertsRead =
  { ok: true; keys: string[]; alerts: number; complete: boolean } | { ok: false; reason: string };

/** What one read needs: the REST API root, the incident, the key, and its time limit. */
export interface IncidentAlertsRequest {
  root: string;
  incident: string;
  apiKey: Secret;
  timeoutMs: number;
}

const pageSchema = z.object({ alerts: z.array(z.unknown()).max(1_000), more: z.boolean().nullish() });
const alertSchema = z.object({ alert_key: z.string().min(1).max(1_000), status: z.string().max(100).nullish() });

/** Reads the alerts of `incident`, page by page, within `timeoutMs` in all. */
export async function readIncidentAlerts(r: IncidentAlertsRequest): Promise<IncidentAlertsRead> {
  const signal = AbortSignal.timeout(r.timeoutMs);
  const keys = new Set<string>();
  // The alerts read so far, and whether PagerDuty says there are more.
  let offset = 0;
  let more = true;
  try {
    for (let page = 0; page < MAX_PAGES && more; page++) {
      const url = `${r.root}/incidents/${encodeURIComponent(r.incident)}/alerts?limit=${PAGE_LIMIT}&offset=${offset}`;
      const res = await request(url, {
        headers: {
          authorization: `Token token=${r.apiKey.reveal()}`,
          accept: 'application/vnd.pagerduty+json;version=2',
          'user-agent': 'deploy-watchdog',
        },
        signal,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return { ok: false, reason: `PagerDuty answered ${res.statusCode}` };
      }
      const text = await readBody(res.body, MAX_PAGE_BYTES);
      if (text === undefined) return { ok: false, reason: `an answer larger than ${MAX_PAGE_BYTES} bytes` };
      const parsed = readJsonBody(text, pageSchema, 'a list of alerts');
      if (!parsed.ok) return { ok: false, reason: 'an answer that is not a list of alerts' };
      for (const item of parsed.data.alerts) {
        const alert = alertSchema.safeParse(item);
        if (alert.success && alert.data.status !== 'resolved') keys.add(alert.data.alert_key);
      }
      offset += parsed.data.alerts.length;
      more = Boolean(parsed.data.more);
      // A page saying there is more, but holding nothing, would be asked for again and again.
      if (parsed.data.alerts.length === 0) break;
    }
    return { ok: true, keys: [...keys], alerts: offset, complete: !more };
  } catch (err) {
    if (signal.aborted) return { ok: false, reason: `no answer within ${r.timeoutMs} ms` };
    // Never the error's message: undici's may carry the URL or a header.
    return { ok: false, reason: `the request failed (${undiciErrorCode(err) ?? 'no code'})` };
  }
}
