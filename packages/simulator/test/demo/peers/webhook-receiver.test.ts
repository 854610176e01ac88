import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../../test/helpers/webhook-receiver.js';

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

describe('webhook receiver (Slack stand-in)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it.each([
    ['a plain text message', { text: 'hi' }, 200, 'ok'],
    ['a message without text or blocks', { username: 'x' }, 400, 'no_text'],
    [
      'a header over 150 characters',
      { blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }] },
      400,
      'invalid_blocks',
    ],
    [
      'a section over 3000 characters',
      { blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 's'.repeat(3001) } }] },
      400,
      'invalid_blocks',
    ],
    ['51 blocks', { blocks: Array.from({ length: 51 }, () => ({ type: 'divider' })) }, 400, 'invalid_blocks'],
  ])('answers %s with %i %s, as Slack would', async (_name, body, status, text) => {
    expect(await post(receiver.url, body)).toEqual({ status, text });
  });

  it('answers 404 no_service on any other path and keeps only accepted payloads', async () => {
    const before = receiver.received.length;
    expect(await post(`${new URL(receiver.url).origin}/services/T/B/wrong`, { text: 'x' })).toEqual({
      status: 404,
      text: 'no_service',
    });
    expect(receiver.received.length).toBe(before);
  });
});
