/**
 * The demo reads messages back from what the stand-ins received: these tests render real messages
 * with the real channel renderers and check what the demo makes of them.
 */
import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../../src/alerts/alert-event.js';
import type { NoticeNotification } from '../../../../src/notify/channels/channel.js';
import { renderEmail } from '../../../../src/notify/channels/email.js';
import { renderSlack } from '../../../../src/notify/channels/slack-render.js';
import { readEmail } from '../../src/demo/read-email.js';
import { mrkdwnToPlain, readSlackPayload as readPayload } from '../../src/demo/read-slack-payload.js';
import type { SlackLikePayload } from '../../src/demo/peers/webhook-receiver.js';
import type { SlackMessage } from '../../../../src/notify/channels/slack-render.js';

/** Reads a rendered message as the stand-in receives it: JSON over the wire. */
function readSlackPayload(message: SlackMessage) {
  return readPayload(JSON.parse(JSON.stringify(message)) as SlackLikePayload);
}

const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);

function event(over: Partial<AlertEvent> = {}): AlertEvent {
  return {
    id: 1,
    kind: 'firing',
    fingerprint: 'certificates/url/7',
    check: 'certificates',
    severity: 'critical',
    summary: 'Certificate of https://shop.example.com for shop-prod (production) expires in 1 day',
    details: { url: 'https://shop.example.com', left: '1 day' },
    labels: { check: 'certificates', environment_type: 'production', namespace: 'acme', app: 'shop-prod' },
    url: 'https://shop.example.com/',
    startsAt: '2026-11-01T11:00:00.000Z',
    endsAt: null,
    at: '2026-11-01T12:00:00.000Z',
    ...over,
  };
}

const slackOptions = { now: NOW, channelName: 'ops-slack' };

describe('readSlackPayload', () => {
  it.each([
    ['certificates', 'certificate problem'],
    ['failed_runs', 'failed run'],
    ['backups', 'backup problem'],
    ['url_checks', 'URL check failing'],
    ['attention', 'item needing attention'],
  ] as const)('reads the check %s from the header noun "%s"', (check, noun) => {
    const message = renderSlack(
      {
        type: 'alerts',
        group: { check, environment_type: 'production' },
        events: [event({ check, labels: { check, app: 'shop-prod' } })],
        omitted: 0,
      },
      slackOptions,
    );
    const reading = readSlackPayload(message);
    expect(reading.title).toContain(noun);
    expect(reading.check).toBe(check);
    expect(reading.topic).toBeNull();
  });

  it('reads firing and resolved events with their app, and prints links by their label', () => {
    const message = renderSlack(
      {
        type: 'alerts',
        group: { check: 'certificates', environment_type: 'production' },
        events: [
          event(),
          event({
            id: 2,
            kind: 'resolved',
            endsAt: '2026-11-01T11:30:00.000Z',
            labels: { check: 'certificates', app: 'books-prod' },
          }),
        ],
        omitted: 0,
      },
      slackOptions,
    );
    const reading = readSlackPayload(message);
    expect(reading.events).toEqual([
      expect.objectContaining({ status: 'CRITICAL', resolved: false, app: 'shop-prod' }),
      expect.objectContaining({ status: 'RESOLVED after 30m', resolved: true, app: 'books-prod' }),
    ]);
    const text = reading.lines.join('\n');
    expect(text).toContain('App: shop-prod');
    // No mrkdwn left: no link or date tokens, no bold markers around labels.
    expect(text).not.toMatch(/<https?:|<!date|\*App:\*/);
  });

  it('reads a notice: its topic from the footer, its fields as "label: value", its link', () => {
    const notice: NoticeNotification = {
      type: 'notice',
      topic: 'remediation',
      title: 'Retried automatically: succeeded',
      severity: 'ok',
      fields: [{ label: 'App', value: 'shop-staging (staging)' }],
      lines: ['Alert: Update of shop-staging failed'],
      url: 'https://shop-staging.example.com/',
    };
    const reading = readSlackPayload(renderSlack(notice, slackOptions));
    expect(reading).toMatchObject({ check: null, topic: 'remediation', events: [] });
    expect(reading.title).toBe('✅ OK · Retried automatically: succeeded');
    expect(reading.lines).toEqual(
      expect.arrayContaining([
        'App: shop-staging (staging)',
        'Alert: Update of shop-staging failed',
        'Open: https://shop-staging.example.com/',
      ]),
    );
  });
});

describe('mrkdwnToPlain', () => {
  it.each([
    ['*App:* <https://a.example.com/|shop>', 'App: shop'],
    ['<!date^1762000000^{date_short_pretty} {time}|2025-11-01 12:26 UTC> (2h ago)', '2025-11-01 12:26 UTC (2h ago)'],
    ['a &lt;b&gt; &amp;lt; c', 'a <b> &lt; c'],
    ['<!here> look', '@here look'],
    ['<https://bare.example.com/>', 'https://bare.example.com/'],
  ])('%s → %s', (input, expected) => {
    expect(mrkdwnToPlain(input)).toBe(expected);
  });
});

describe('readEmail', () => {
  it('keeps the subject and the event lines, leaves out fact rows and the signature', () => {
    const message = renderEmail(
      {
        type: 'alerts',
        group: { check: 'certificates', environment_type: 'production' },
        events: [event()],
        omitted: 0,
      },
      { now: NOW, channelName: 'ops-mail', subject_prefix: '[deploy-watchdog]' },
    );
    const reading = readEmail(message);
    expect(reading.subject).toBe('[deploy-watchdog] CRITICAL 1 certificate problem · shop-prod (production)');
    expect(reading.brief).toEqual([
      'Subject: [deploy-watchdog] CRITICAL 1 certificate problem · shop-prod (production)',
      '  CRITICAL · Certificate of https://shop.example.com for shop-prod (production) expires in 1 day',
      "  Next step: Renew the certificate, or fix what blocks its automatic renewal (the domain's DNS, the ACME challenge).",
    ]);
    expect(reading.lines.join('\n')).toContain('Namespace:');
    expect(reading.lines.join('\n')).not.toContain('ops-mail');
  });
});
