/**
 * The HTTP part every protocol-level fake of an on-call service shares (PagerDuty, Opsgenie, Teams,
 * Discord): a real server on loopback, on an ephemeral port, that reads each request's JSON body,
 * keeps what it received, and answers through the fake's own handler unless a test has scripted
 * the next answers (`answerNext`: a 429, a 503, a hang-up) to see the daemon through a failure.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake received it. */
export interface FakeRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as text, whole. */
  raw: string;
  /** The body as JSON; undefined when it is not JSON. */
  body: unknown;
}

/** An answer. */
export interface FakeAnswer {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless a string. */
  body?: unknown;
  /** Never answered (the connection is held until the fake closes): a service that hangs. */
  hang?: boolean;
}

/** A running fake. */
export interface FakeService {
  /** `http://127.0.0.1:<port>`. */
  readonly root: string;
  /** Every request, oldest first. */
  readonly requests: FakeRequest[];
  /**
   * Answers `times` requests with `answer` instead of the fake's own (the handler never sees them),
   * after letting `after` more reach the handler first.
   */
  answerNext(answer: FakeAnswer, times?: number, after?: number): void;
  /**
   * Lets the handler take the next `times` requests (what they do is done) and then drops the
   * connection instead of answering: an answer lost on its way back.
   */
  loseNextAnswers(times?: number): void;
  close(): Promise<void>;
}

/** Starts a fake whose handler answers each request (after any scripted answer). */
export async function startFakeService(handle: (request: FakeRequest) => FakeAnswer): Promise<FakeService> {
  const requests: FakeRequest[] = [];
  // null: that request goes to the handler.
  const scripted: (FakeAnswer | null)[] = [];
  let losing = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const request: FakeRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body };
      requests.push(request);
      const answer = scripted.shift() ?? handle(request);
      if (losing > 0) {
        losing--;
        res.socket?.destroy();
        return;
      }
      send(res, answer);
    });
  });
  // Idle connections stay open until close(), as the webhook receiver's do: no keep-alive race.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    root: `http://127.0.0.1:${port}`,
    requests,
    answerNext(answer, times = 1, after = 0) {
      for (let i = 0; i < after; i++) scripted.push(null);
      for (let i = 0; i < times; i++) scripted.push(answer);
    },
    loseNextAnswers(times = 1) {
      losing += times;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, answer: FakeAnswer): void {
  if (answer.hang) return;
  const text =
    answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    ...(answer.body !== undefined && typeof answer.body !== 'string' ? { 'content-type': 'application/json' } : {}),
    ...answer.headers,
  });
  res.end(text);
}

/** A zod-style problem list as a 400's words: where, and what is wrong. */
export function problems(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] {
  return issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
}

/** A webhook a fake service sends (its body as bytes go, its headers), to post again as a replay. */
export interface WebhookPost {
  body: string;
  headers: Record<string, string>;
}

/** Posts a webhook to `url` as the service would; answers the status it got. */
export async function postWebhook(url: string, post: WebhookPost): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...post.headers },
    body: post.body,
  });
  await res.arrayBuffer();
  return res.status;
}
