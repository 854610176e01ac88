import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerJson } from './answer-json.js';

/**
 * A request's (or an answer's) body as text, or undefined once it passes `maxBytes` (the rest is
 * not read: breaking out of the loop destroys the stream; a request's caller answers 413).
 */
export async function readBody(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A POST's body as text to `take`: another method is answered 405, a body past `maxBytes` 413,
 * and a connection that fails while it sends is closed.
 */
export function readPost(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
  take: (body: string) => void,
): void {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  readBody(req, maxBytes).then(
    (body) => (body === undefined ? answerJson(res, 413, { error: 'too large' }) : take(body)),
    () => res.destroy(),
  );
}
