/**
 * The on-call webhooks' pure parts: PagerDuty's V3 signature (one of several, constant-time, never
 * a near miss), Opsgenie's token (its header or a bearer token), and what each body asks, read as
 * data whatever it holds.
 */
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import {
  OPSGENIE_TOKEN_HEADER,
  readOpsgenieWebhook,
  verifyOpsgenieToken,
} from '../../src/interactions/opsgenie-webhook.js';
import {
  pagerdutySignature,
  readPagerDutyWebhook,
  verifyPagerDutySignature,
} from '../../src/interactions/pagerduty-webhook.js';
import { pagerdutyWebhookSignature } from '../helpers/pagerduty-fake.js';

const SECRET = new Secret('a-signing-secret-of-the-subscription');
const BODY = '{"event":{"id":"01ABC","event_type":"incident.acknowledged"}}';
const GOOD = pagerdutySignature(SECRET.reveal(), BODY);

describe('the PagerDuty signature', () => {
  it("is what the fake (written from PagerDuty's documentation) signs", () => {
    expect(GOOD).toBe(pagerdutyWebhookSignature(SECRET.reveal(), BODY));
    expect(GOOD).toMatch(/^v1=[0-9a-f]{64}$/);
  });

  it.each([
    ['the signature', GOOD, true],
    ['one among several (a rotation)', `v1=${'a'.repeat(64)}, ${GOOD},v1=${'b'.repeat(64)}`, true],
    ['no header', undefined, false],
    ['an empty header', '', false],
    ['another secret', pagerdutySignature('another-secret', BODY), false],
    ['another body', pagerdutySignature(SECRET.reveal(), `${BODY} `), false],
    ['the hex without its version', GOOD.slice(3), false],
    ['another version', GOOD.replace('v1=', 'v0='), false],
    ['the signature in capitals', GOOD.toUpperCase(), false],
    ['a prefix of it', GOOD.slice(0, -1), false],
  ])('%s: %s', (_, header, ok) => {
    expect(verifyPagerDutySignature({ 'x-pagerduty-signature': header }, BODY, SECRET)).toBe(ok);
  });
});

describe('a PagerDuty webhook read', () => {
  const event = (e: object) => JSON.stringify({ event: { id: 'E1', event_type: 'incident.acknowledged', ...e } });
  it.each([
    [
      'an acknowledgement',
      event({
        occurred_at: '2026-11-01T12:00:00.000Z',
        agent: { summary: 'Alice', type: 'user_reference' },
        data: { incident_key: 'fp/1' },
      }),
      { ok: true, id: 'E1', act: { act: 'acknowledge', key: 'fp/1', by: 'Alice', at: Date.UTC(2026, 10, 1, 12) } },
    ],
    [
      'a giving back by no one (an automation)',
      event({ event_type: 'incident.unacknowledged', agent: null, data: { incident_key: 'fp/1' } }),
      { ok: true, act: { act: 'unacknowledge', key: 'fp/1', by: '' } },
    ],
    [
      'an event type not used',
      event({ event_type: 'incident.resolved', data: { incident_key: 'fp/1' } }),
      { ok: true, act: null },
    ],
    ['an incident without a key (not ours)', event({ data: { incident_key: null } }), { ok: true, act: null }],
    [
      'the incident that may group several alerts',
      event({ data: { id: 'Q1XQPZ3PYQ0ABC', incident_key: 'fp/1' } }),
      { ok: true, act: { key: 'fp/1', incident: 'Q1XQPZ3PYQ0ABC' } },
    ],
    [
      "an incident id not of PagerDuty's form (it would go in a path)",
      event({ data: { id: '../../users', incident_key: 'fp/1' } }),
      { ok: true, act: { key: 'fp/1', incident: undefined } },
    ],
    [
      'a name that is markup',
      event({ agent: { summary: '<!channel> *x*' }, data: { incident_key: 'k' } }),
      { act: { by: '<!channel> *x*' } },
    ],
    ['no JSON', 'not json', { ok: false }],
    ['no event', '{"messages":[]}', { ok: false }],
    ['an event without an id', JSON.stringify({ event: { event_type: 'incident.acknowledged' } }), { ok: false }],
  ])('%s', (_, body, read) => {
    expect(readPagerDutyWebhook(body)).toMatchObject(read);
  });
});

describe('the Opsgenie token', () => {
  const token = new Secret('an-opsgenie-webhook-token-0123');
  it.each([
    ['its header', { token: token.reveal(), authorization: undefined }, true],
    ['a bearer token', { token: undefined, authorization: `Bearer ${token.reveal()}` }, true],
    ['a bearer token, the word in lower case', { token: undefined, authorization: `bearer ${token.reveal()}` }, true],
    ['nothing', { token: undefined, authorization: undefined }, false],
    ['another token', { token: 'an-opsgenie-webhook-token-0124', authorization: undefined }, false],
    ['a prefix of it', { token: token.reveal().slice(0, -1), authorization: undefined }, false],
    ['the API key scheme', { token: undefined, authorization: `GenieKey ${token.reveal()}` }, false],
    ['a wrong header beside a right bearer', { token: 'wrong', authorization: `Bearer ${token.reveal()}` }, false],
  ])('%s', (_, headers, ok) => {
    expect(
      verifyOpsgenieToken({ [OPSGENIE_TOKEN_HEADER]: headers.token, authorization: headers.authorization }, token),
    ).toBe(ok);
  });
});

describe('an Opsgenie webhook read', () => {
  const post = (action: string, alert: object | null) => JSON.stringify({ action, alert, integrationType: 'Webhook' });
  it.each([
    [
      'an acknowledgement',
      post('Acknowledge', { alias: 'fp/1', username: 'bob@example.com', updatedAt: 1_420_452_224_764 * 1e6 + 2246 }),
      { ok: true, act: { act: 'acknowledge', key: 'fp/1', by: 'bob@example.com', at: 1420452224764 } },
    ],
    [
      'an update time in milliseconds (not as documented)',
      post('Acknowledge', { alias: 'fp/1', updatedAt: 1420452224764 }),
      { ok: true, act: { at: 1420452224764 } },
    ],
    [
      'a giving back',
      post('UnAcknowledge', { alias: 'fp/1', username: 'bob' }),
      { ok: true, act: { act: 'unacknowledge' } },
    ],
    ['a close (the check decides)', post('Close', { alias: 'fp/1' }), { ok: true, act: null }],
    ['an alert without an alias', post('Acknowledge', { username: 'bob' }), { ok: true, act: null }],
    ['no alert', post('Acknowledge', null), { ok: true, act: null }],
    ['no JSON', '<xml/>', { ok: false }],
    ['no action', JSON.stringify({ alert: {} }), { ok: false }],
  ])('%s', (_, body, read) => {
    expect(readOpsgenieWebhook(body)).toMatchObject(read);
  });

  it('names a post by its body: the same post twice has the same id, another post another', () => {
    const a = readOpsgenieWebhook(post('Acknowledge', { alias: 'fp/1', updatedAt: 1 }));
    const b = readOpsgenieWebhook(post('Acknowledge', { alias: 'fp/1', updatedAt: 1 }));
    const c = readOpsgenieWebhook(post('Acknowledge', { alias: 'fp/1', updatedAt: 2 }));
    expect(a.ok && b.ok && c.ok && a.id === b.id && a.id !== c.id).toBe(true);
  });
});
