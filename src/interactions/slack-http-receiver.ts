/**
 * Clicks over HTTP: Slack posts each interaction to `POST /slack/interactions` on `server.listen`
 * (behind whatever proxy makes it reachable), form-encoded, the JSON in the field `payload`. Each
 * request is checked against the signing secrets of the apps configured (`slack-signature.ts`)
 * before anything in it is read: an unsigned, tampered or old request is refused with 401 and a
 * log line, and nothing is done. A signed one is answered 200 at once (Slack wants an answer
 * within 3 seconds), then handed on. A signed body seen before is a replay (the signature holds
 * for five minutes either way; a retry signs the same body again), refused like a forged one: each
 * body's digest is remembered until its timestamp, or the time it came, is out of the window.
 *
 * It runs in the listener's own thread (`src/server/front-door-worker.ts`), so the answer never
 * waits on the main thread, which may be blocked in a statement: it imports nothing that runs but
 * `slack-signature.ts` and the replay memory it shares with Socket Mode (`replay-memory.ts`), and
 * takes its secrets, clock and log as plain functions.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerJson } from '../lib/answer-json.js';
import type { Secret } from '../lib/secret.js';
import { readPost } from '../lib/read-body.js';
import { RepeatedLog, type LineLogger } from '../lib/repeated-log.js';
import { ReplayMemory } from './replay-memory.js';
import { SIGNATURE_MAX_AGE_MS, verifySlackRequest, type SigningSecret } from './slack-signature.js';

/**
 * Slack's clicks over HTTP, as one configuration takes them: the front door verifies each post
 * against {@link secrets} (in its own thread, so Slack is answered within its 3 s whatever the
 * main thread is doing), answers it, and hands the payload over with the secret that signed it.
 */
export interface InteractionsTaker {
  /** The signing secrets, one per app that takes its clicks over HTTP. */
  readonly secrets: readonly Secret[];
  /**
   * A verified click's payload (signed by `secret`, fresh, never seen before), already answered 200.
   * Never throws: the click is handled apart.
   */
  take(payload: unknown, secret: Secret): void;
}

/** The path Slack's Interactivity Request URL must end in. */
export const INTERACTIONS_PATH = '/slack/interactions';

/** The largest body taken: a click's payload holds the whole message clicked, well under this. */
const MAX_BODY_BYTES = 1024 * 1024;

/** What the HTTP receiver works with. */
export interface HttpReceiverOptions {
  /** The signing secrets in force, one per app that may post here (asked at each request: a reload may change them). */
  secrets: () => readonly SigningSecret[];
  /** A signed interaction's payload, and the index of the secret that signed it. */
  onPayload: (payload: unknown, secret: number) => void;
  /** The daemon's time (ms), which a request's timestamp must be within five minutes of. */
  clock: { now(): number };
  /** Where a refusal is said: never the secret, only the client and the reason. */
  log: LineLogger;
}

/** The handler of Slack's interaction posts, at {@link INTERACTIONS_PATH}. */
export function httpInteractionsHandler(o: HttpReceiverOptions): (req: IncomingMessage, res: ServerResponse) => void {
  // Anyone can post here: a refusal is said once a minute with a count, never once a request.
  const refusals = new RepeatedLog(o.log, { clock: o.clock });
  // Body digest → when it is forgotten (its timestamp or arrival + the window). Only signed requests
  // are remembered, so a stranger cannot fill it; it holds ten minutes of Slack's posts at most.
  const seen = new ReplayMemory();
  return (req, res) =>
    readPost(req, res, MAX_BODY_BYTES, (body) => {
      const header = (name: string) => [req.headers[name]].flat()[0];
      const signed = { timestamp: header('x-slack-request-timestamp'), signature: header('x-slack-signature'), body };
      const now = o.clock.now();
      const check = verifySlackRequest(signed, o.secrets(), now);
      // A replay is refused as a forged request is: 401, its reason said and answered.
      const refuse = (reason: string, message: string) => {
        refusals.warn({ remote: req.socket.remoteAddress, reason }, `Slack interaction refused: ${message}`);
        answerJson(res, 401, { error: reason });
      };
      // Keyed by the body (a click's trigger_id makes each one's own): a copy signed again later
      // (Slack's retry, a proxy's) is the same click, refused as a replay is.
      const until = Math.max(Number(signed.timestamp) * 1000, now) + SIGNATURE_MAX_AGE_MS;
      if (check.ok && seen.seen(createHash('sha256').update(body).digest('hex'), until, now)) {
        return refuse('replayed', 'the same signed request was taken before (a replay)');
      }
      if (!check.ok) return refuse(check.reason, check.message);
      let payload: unknown;
      try {
        payload = JSON.parse(new URLSearchParams(body).get('payload') ?? '');
      } catch {
        refusals.warn({ remote: req.socket.remoteAddress }, 'Slack interaction refused: no JSON payload field');
        return answerJson(res, 400, { error: 'no payload' });
      }
      res.writeHead(200).end();
      o.onPayload(payload, check.index);
    });
}
