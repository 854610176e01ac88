import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the stand-in answers, to show (in the demo) and prove (in tests) what the watchdog does when
 * Slack misbehaves: `ok` 200 "ok"; `fail500` 500; `rateLimit` 429 with Retry-After; `notFound`
 * 404 "no_service" (a revoked webhook); `hang` never answers; `echoPath` 400 with a body that ends
 * by echoing the webhook's path (its secret part), as a proxy's error page may.
 */
export type WebhookMode = 'ok' | 'fail500' | 'rateLimit' | 'notFound' | 'hang' | 'echoPath';

/** Options of {@link startWebhookReceiver}. */
export interface WebhookReceiverOptions {
  /** Loopback by default: the stand-in is never meant to be reachable from elsewhere. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Seconds sent in Retry-After in `rateLimit` mode (default 1). */
  retryAfterSeconds?: number;
  /** Called with each accepted payload, e.g. to print it in the demo. */
  onPayload?: (payload: SlackLikePayload) => void;
  /** Payloads kept in `received`; older ones are dropped (default 1000) so a long demo stays small. */
  maxKept?: number;
}

/** The parts of a Slack webhook payload the stand-in looks at. */
export interface SlackLikePayload {
  text?: string;
  blocks?: { type: string; text?: { text?: string }; fields?: { text?: string }[]; elements?: { text?: string }[] }[];
  [key: string]: unknown;
}

/** A running stand-in for a Slack incoming webhook. */
export interface WebhookReceiver {
  /** The webhook URL, with a random secret-looking path like Slack's (`/services/T…/B…/…`). */
  readonly url: string;
  /** Payloads answered with 200, oldest first. */
  readonly received: SlackLikePayload[];
  /** Every request that reached the webhook path, answered or not. */
  readonly requests: number;
  setMode(mode: WebhookMode): void;
  /** Stops listening and drops open connections (hanging requests among them). */
  close(): Promise<void>;
}

/** Slack's own limits, enforced so a message Slack would refuse is refused here too (400 invalid_blocks). */
const LIMITS = { blocks: 50, header: 150, text: 3000, fields: 10, field: 2000 };

/**
 * Why Slack would refuse the payload (its error word), or null when it would take it. Also the
 * tests' fake Slack Web API's check of every message and attachment it is given.
 */
export function slackRefusal(payload: SlackLikePayload): string | null {
  if (typeof payload.text !== 'string' && !Array.isArray(payload.blocks)) return 'no_text';
  const blocks = payload.blocks ?? [];
  if (blocks.length > LIMITS.blocks) return 'invalid_blocks';
  for (const b of blocks) {
    const text = b.text?.text;
    if (b.type === 'header' && (typeof text !== 'string' || text.length > LIMITS.header)) return 'invalid_blocks';
    if (typeof text === 'string' && text.length > LIMITS.text) return 'invalid_blocks';
    if (b.fields && (b.fields.length > LIMITS.fields || b.fields.some((f) => (f.text ?? '').length > LIMITS.field)))
      return 'invalid_blocks';
    if (b.elements?.some((e) => (e.text ?? '').length > LIMITS.text)) return 'invalid_blocks';
  }
  return null;
}

/**
 * Starts a local HTTP server that behaves like a Slack incoming webhook: the demo's Slack and the
 * tests' real peer. It answers only POSTs to its own path (anything else gets Slack's 404
 * "no_service"), refuses payloads Slack would refuse, and answers as `setMode` says.
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const path = `/services/T0LOCAL/B0LOCAL/${randomBytes(12).toString('hex')}`;
  const maxKept = options.maxKept ?? 1000;
  const received: SlackLikePayload[] = [];
  let mode: WebhookMode = 'ok';
  let requests = 0;

  const answer = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== path) return answer(res, 404, 'no_service');
    if (req.method !== 'POST') return answer(res, 405, 'invalid_method');
    requests += 1;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    switch (mode) {
      case 'hang':
        return; // never answer; close() drops the connection
      case 'fail500':
        return answer(res, 500, 'internal_error');
      case 'rateLimit':
        return answer(res, 429, 'rate_limited', { 'retry-after': String(options.retryAfterSeconds ?? 1) });
      case 'notFound':
        return answer(res, 404, 'no_service');
      case 'echoPath':
        // Long enough before the path that a reason cut at 120 characters would cut the secret in half.
        return answer(res, 400, `invalid_payload ${'.'.repeat(50)} posted to ${path}`);
      case 'ok':
        break;
    }
    let payload: SlackLikePayload;
    try {
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SlackLikePayload;
    } catch {
      return answer(res, 400, 'invalid_payload');
    }
    if (typeof payload !== 'object' || payload === null) return answer(res, 400, 'invalid_payload');
    const refusal = slackRefusal(payload);
    if (refusal) return answer(res, 400, refusal);
    received.push(payload);
    if (received.length > maxKept) received.shift();
    options.onPayload?.(payload);
    answer(res, 200, 'ok');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => answer(res, 500, 'internal_error'));
  });
  // Idle connections stay open until close(): with node's 5 s idle timeout, a sender that reused a
  // connection just as the receiver dropped it got ECONNRESET (a race a loaded machine wins, seen at
  // load 20-30), and a test expecting one clean delivery failed for the fake's sake, not the
  // product's (which calls a reset retryable: test/notify/channels/classify.test.ts).
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  return {
    url: `http://${host}:${port}${path}`,
    received,
    get requests() {
      return requests;
    },
    setMode(next) {
      mode = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
