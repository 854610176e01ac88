import type { ServerResponse } from 'node:http';

/** Answers `body` as JSON with `status` (the listener's and the webhooks' refusals and answers). */
export function answerJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
