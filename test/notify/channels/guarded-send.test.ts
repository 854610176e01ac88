import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/lib/secret.js';
import type { SendResult } from '../../../src/notify/channels/channel.js';
import { guardedSend } from '../../../src/notify/channels/guarded-send.js';
import { captureLogger } from './fixtures.js';

const SECRET = new Secret('hunter2-secret');

function run(start: () => Promise<string>, signal?: AbortSignal) {
  const { logger, lines } = captureLogger();
  const result = guardedSend({
    start,
    signal,
    peer: 'the peer',
    answered: (v): SendResult =>
      v === 'ok' ? { outcome: 'ok' } : { outcome: 'permanent', reason: `answered ${v} hunter2-secret` },
    failed: (err): SendResult => ({ outcome: 'retryable', reason: `failed: ${(err as Error).message}` }),
    secrets: [SECRET],
    log: logger,
  });
  return { result, lines };
}

describe('guardedSend', () => {
  const stopped = AbortSignal.abort();
  it.each<[string, () => Promise<string>, AbortSignal | undefined, SendResult, boolean]>([
    ['an answer', () => Promise.resolve('ok'), undefined, { outcome: 'ok' }, false],
    [
      'an answer read as a refusal, scrubbed',
      () => Promise.resolve('no'),
      undefined,
      { outcome: 'permanent', reason: 'answered no <secret>' },
      true,
    ],
    [
      'a throw, scrubbed',
      () => Promise.reject(new Error('POST https://x/hunter2-secret refused')),
      undefined,
      { outcome: 'retryable', reason: 'failed: POST https://x/<secret> refused' },
      true,
    ],
    [
      'a signal fired before the start',
      () => Promise.resolve('ok'),
      stopped,
      { outcome: 'retryable', reason: 'aborted before sending' },
      false,
    ],
  ])('%s', async (_name, start, signal, expected, logged) => {
    const { result, lines } = run(start, signal);
    expect(await result).toEqual(expected);
    expect(lines.join('')).not.toContain('hunter2-secret');
    expect(lines.some((l) => l.includes('delivery failed'))).toBe(logged);
  });

  it('stops waiting when the signal fires during the call', async () => {
    const ac = new AbortController();
    const { result } = run(() => new Promise<string>(() => undefined), ac.signal);
    ac.abort();
    expect(await result).toEqual({ outcome: 'retryable', reason: 'aborted before the peer answered' });
  });
});
