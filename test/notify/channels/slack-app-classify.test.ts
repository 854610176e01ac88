import { WebAPIPlatformError, WebAPIRateLimitedError } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import { classifySlackApiError, slackErrorWord } from '../../../src/notify/channels/slack-app-classify.js';

const CALLEE = { name: 'ops-app', channel: 'C0ALERTS', timeout: 300 };
const NOW = Date.UTC(2026, 10, 1);

/** The failures no answer of the fake Slack can produce: those of the client itself and of our side. */
describe('classifySlackApiError, beyond what an answer shows', () => {
  it.each([
    {
      what: 'a rate limit far past the cap: waited at most an hour',
      err: new WebAPIRateLimitedError(86_400),
      result: { outcome: 'retryable', reason: 'rate limited (HTTP 429): ratelimited', retryAfterMs: 3_600_000 },
    },
    {
      what: 'an error word without its text (a malformed answer)',
      err: new WebAPIPlatformError({ ok: false, error: '' }),
      result: { outcome: 'permanent', reason: 'Slack refused the call ()' },
    },
    ...['constructor', 'toString', '__proto__'].map((word) => ({
      what: `an error word that names a property of every object (${word}): a plain refusal of the message`,
      err: new WebAPIPlatformError({ ok: false, error: word }),
      result: { outcome: 'permanent', reason: `Slack refused the call (${word})` },
    })),
    {
      what: 'a state file busy or full (ours, not Slack’s): tried again',
      err: Object.assign(new Error('database is locked'), { name: 'SqliteError' }),
      result: { outcome: 'retryable', reason: 'could not complete the send (SqliteError)' },
    },
    {
      what: 'nothing at all',
      err: undefined,
      result: { outcome: 'retryable', reason: 'could not complete the send (unknown error)' },
    },
  ])('$what', ({ err, result }) => {
    expect(classifySlackApiError(err, CALLEE, NOW)).toEqual(result);
  });

  it.each([
    { err: new WebAPIPlatformError({ ok: false, error: 'message_not_found' }), word: 'message_not_found' },
    { err: new WebAPIRateLimitedError(3), word: undefined },
    { err: new Error('channel_not_found'), word: undefined },
  ])('slackErrorWord reads only the word Slack answered: $word', ({ err, word }) => {
    expect(slackErrorWord(err)).toBe(word);
  });
});
