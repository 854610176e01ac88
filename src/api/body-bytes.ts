/**
 * An answer's body as one run of bytes, joined from the chunks it arrived in.
 *
 * Why one reused buffer: a list page is 0.3-0.5 MB in 6-8 chunks, and `Buffer.concat` gave every
 * body a fresh block of its own. With the daemon's glibc settings (`src/cli/memory-settings.ts`)
 * each such block is mapped and unmapped on its own, so a 10,000-app cycle (~130 such pages, ~60
 * MB) paid a page fault for every 4 kB it joined, then the unmapping. Measured on the pages of that
 * cycle: join and decode 0.73 s of CPU per 52 MB with `Buffer.concat`, 0.37 s through this buffer.
 * The bytes are decoded (or copied) while they are in it, so one buffer serves every exchange of the
 * process: JavaScript runs one answer's end at a time.
 */

/**
 * Bodies up to this size are joined in the reused buffer, which keeps its largest size (so at most
 * this much, only what was touched counting toward RSS); a larger one gets a block of its own, as
 * before (rare: past `LARGE_ANSWER_BYTES` answers are read one at a time anyway).
 */
export const REUSED_BODY_BYTES = 1024 * 1024;

let reused: Buffer | undefined;

/**
 * Hands `read` the body `chunks` make (`bytes` long) as one Buffer, and returns what it returns.
 * The Buffer may be reused after `read` returns: `read` must copy or decode what it keeps.
 */
export function withBodyBytes<T>(chunks: readonly Buffer[], bytes: number, read: (body: Buffer) => T): T {
  if (chunks.length === 1) return read(chunks[0]!);
  if (bytes > REUSED_BODY_BYTES) return read(Buffer.concat(chunks, bytes));
  if (reused === undefined || reused.length < bytes) {
    // Grown in steps of 64 kB: a few sizes, not one per body.
    reused = Buffer.allocUnsafeSlow(Math.min(REUSED_BODY_BYTES, Math.ceil(bytes / 65_536) * 65_536));
  }
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(reused, at);
  return read(reused.subarray(0, bytes));
}
