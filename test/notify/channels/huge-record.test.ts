/**
 * One record of the service's with very many fields (an attention item of 126,000, 1.8 MB, within
 * the answer limits) or one very long text: every channel still renders its alert, bounded. Once
 * it made a critical alert undeliverable ("cannot render the message (RangeError)") through
 * `push(...)` spreads, and the escaping split a whole text into an array first.
 */
import { describe, expect, it } from 'vitest';
import type { Fact } from '../../../src/lib/alert-vocabulary.js';
import { renderEmail } from '../../../src/notify/channels/email.js';
import { renderLog } from '../../../src/notify/channels/log.js';
import { renderSlack } from '../../../src/notify/channels/slack-render.js';
import { renderWebhook } from '../../../src/notify/channels/webhook.js';
import { alertEvent, alerts, NOW } from './fixtures.js';

const MANY = 126_000;
const facts: Fact[] = Array.from({ length: MANY }, (_, i) => ({ label: `field_${i}`, value: `v${i}` }));
const event = alertEvent({ facts, summary: `${'very long reason '.repeat(400_000)}end` });
const notification = alerts([event]);

describe.each([
  ['email', () => JSON.stringify(renderEmail(notification, { now: NOW, channelName: 'mail', subject_prefix: '[dw]' }))],
  ['slack', () => JSON.stringify(renderSlack(notification, { now: NOW, channelName: 'slack' }))],
  [
    'webhook',
    () =>
      JSON.stringify(
        renderWebhook(notification, {
          now: NOW,
          channelName: 'oncall',
          externalUrl: 'https://watchdog.example.com',
          maxAlerts: 0,
          links: { pages: {}, checkRunbooks: {}, routeRunbooks: {} },
        }),
      ),
  ],
  ['log', () => JSON.stringify(renderLog(notification))],
])('%s', (_kind, render) => {
  it(`renders an alert with ${MANY} facts and a 6.8 MB summary`, () => {
    const text = render();
    expect(text).toContain('very long reason');
    expect(text).toMatch(/characters more, cut|more fields not shown/);
    // Bounded by what a person reads, not by what the service sent.
    expect(text.length).toBeLessThan(100_000);
  });
});
