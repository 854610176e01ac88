import type { IncomingMessage } from 'node:http';

/**
 * A request's body as text, or undefined once it passes `maxBytes` (the rest is not read: the
 * caller answers 413 and the connection goes).
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
