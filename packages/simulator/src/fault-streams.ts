/**
 * The hostile bodies that are too big to build: a huge answer and an endless one. Both are
 * written from small reused buffers, as fast as the client reads and no faster (backpressure), so
 * the simulator stays small whatever it sends; both stop when the client disconnects or the
 * simulator closes, leaving no timer or listener behind.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** 1 MB as the faults count it. */
export const MB = 1_048_576;
/** A huge body is written in pieces of this size. */
const HUGE_PIECE = 65_536;
/** An endless body sends one chunk (about 1 MB) this often, at most. */
const ENDLESS_EVERY_MS = 10;
/** One list item of an endless body, repeated. */
const ENDLESS_ITEM = '{"id":0,"name":"endless","state":"running","namespace":"endless"},';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Streams huge and endless bodies for one simulator. */
export class FaultStreams {
  /** One controller per body being written: aborted by its client's disconnect or by close(). */
  private readonly live = new Set<AbortController>();
  private fillerPiece: Buffer | null = null;
  private densePiece: Buffer | null = null;
  private endlessChunk: Buffer | null = null;

  /** How many bodies are being written now. */
  get open(): number {
    return this.live.size;
  }

  /** Stops every body being written (the server closes the connections). */
  close(): void {
    for (const c of this.live) c.abort();
    this.live.clear();
  }

  /**
   * Status 200 and `answer` (a `{"data":…}` JSON object) grown to `bytes` bytes with a `padding`
   * string beside `data` (`dense`: an array of zeros): still valid JSON, sent chunked without a length.
   */
  async huge(res: ServerResponse, answer: string, bytes: number, dense = false): Promise<void> {
    const head = `${answer.slice(0, -1)},"padding":${dense ? '[' : '"'}`;
    const tail = dense ? '0]}' : '"}';
    // A dense piece is whole `0,` pairs, so the array stays valid wherever a piece is cut short.
    let left = Math.max(0, bytes - Buffer.byteLength(head) - tail.length);
    if (dense) left -= left % 2;
    const piece = dense
      ? (this.densePiece ??= Buffer.alloc(HUGE_PIECE, '0,'))
      : (this.fillerPiece ??= Buffer.alloc(HUGE_PIECE, 'x'));
    await this.stream(res, head, async (signal) => {
      while (left > 0 && !signal.aborted) {
        const n = Math.min(left, piece.length);
        left -= n;
        await write(res, n === piece.length ? piece : piece.subarray(0, n), signal);
      }
      if (!signal.aborted) res.end(tail);
    });
  }

  /** Status 200 and a list answer that never ends: about 1 MB every 10 ms, slower if the client reads slower. */
  async endless(res: ServerResponse): Promise<void> {
    this.endlessChunk ??= Buffer.alloc(Math.floor(MB / ENDLESS_ITEM.length) * ENDLESS_ITEM.length, ENDLESS_ITEM);
    const chunk = this.endlessChunk;
    await this.stream(res, '{"data":{"items":[', async (signal) => {
      for (;;) {
        await write(res, chunk, signal);
        await sleep(ENDLESS_EVERY_MS, undefined, { signal });
      }
    });
  }

  /** Sends the head, then runs `body` until it ends or the stream is stopped. */
  private async stream(res: ServerResponse, head: string, body: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (res.destroyed) return;
    const stop = new AbortController();
    this.live.add(stop);
    const onClose = () => stop.abort();
    res.once('close', onClose);
    try {
      res.writeHead(200, { 'content-type': JSON_TYPE });
      await write(res, head, stop.signal);
      await body(stop.signal);
    } catch (err) {
      // Stopped (client gone or simulator closing): nothing left to send. Anything else is a bug.
      if (!stop.signal.aborted) throw err;
    } finally {
      res.off('close', onClose);
      this.live.delete(stop);
      if (!res.writableEnded) res.destroy();
    }
  }
}

/** Writes a chunk and, when the client has not taken the previous ones yet, waits until it has. */
async function write(res: ServerResponse, chunk: string | Buffer, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw signal.reason;
  if (!res.write(chunk)) await once(res, 'drain', { signal });
}
