/**
 * The app rules of inhibition: an app in maintenance or upgrade standby (its open maintenance or
 * standby alert, pending or firing) holds its URL and certificate alerts without a summary; an app
 * whose app_state alert fires holds them under it, one page and one summary. First the rules as a
 * table of the Inhibitor, then one pass through the outbox each, against a webhook receiver.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckName } from '../../src/detectors/registry.js';
import type { Finding } from '../../src/detectors/finding.js';
import type { Labels } from '../../src/lib/alert-vocabulary.js';
import { Inhibitor, type InhibitionSource, type InhibitRule } from '../../src/notify/inhibition.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { finding, Harness, HOUR, MINUTE, payloadText, slackTo } from './notify-fixture.js';

const ALL_ON = { api_unreadable: true, bad_servers: true, app_maintenance: true, app_down: true };

/** An open alert of `check` about app `app` of namespace acme. */
const open = (
  check: string,
  status: 'firing' | 'pending',
  labels: Partial<Labels> = {},
  details: Record<string, string> = {},
): InhibitionSource => ({
  fingerprint: `${check}/app/1`,
  status,
  summary: `${check} of shop`,
  labels: { check, namespace: 'acme', app: 'shop', ...labels },
  details,
  firedAt: status === 'firing' ? 0 : null,
});

/** An alert of `check` about a URL of `app`. */
const urlAlert = (check: string, app = 'shop', namespace = 'acme') => ({
  fingerprint: `${check}/url/10`,
  labels: { check, namespace, app, host: 'shop.example.com' },
});

describe('Inhibitor: the app rules', () => {
  it.each<
    [
      string,
      InhibitionSource[],
      Partial<typeof ALL_ON>,
      { fingerprint: string; labels: Labels },
      InhibitRule | null,
      string?,
    ]
  >([
    [
      'maintenance pending holds a failing URL',
      [open('maintenance', 'pending')],
      {},
      urlAlert('url_checks'),
      'app_maintenance',
      'shop is in maintenance mode',
    ],
    [
      'maintenance firing holds a certificate',
      [open('maintenance', 'firing')],
      {},
      urlAlert('certificates'),
      'app_maintenance',
      'shop is in maintenance mode',
    ],
    [
      'maintenance of another app holds nothing',
      [open('maintenance', 'pending')],
      {},
      urlAlert('url_checks', 'blog'),
      null,
    ],
    [
      'maintenance of the same name in another namespace holds nothing',
      [open('maintenance', 'pending')],
      {},
      urlAlert('url_checks', 'shop', 'other'),
      null,
    ],
    [
      'maintenance holds only URL alerts',
      [open('maintenance', 'pending')],
      {},
      { fingerprint: 'backups/app/1/stale', labels: { check: 'backups', namespace: 'acme', app: 'shop' } },
      null,
    ],
    ['app_maintenance off', [open('maintenance', 'pending')], { app_maintenance: false }, urlAlert('url_checks'), null],
    [
      'upgrade standby pending holds the upgraded app',
      [open('upgrades', 'pending', { problem: 'standby' }, { new_app: 'shop-19' })],
      {},
      urlAlert('url_checks'),
      'app_maintenance',
      'shop is in upgrade standby',
    ],
    [
      'upgrade standby holds its new app too',
      [open('upgrades', 'pending', { problem: 'standby' }, { new_app: 'shop-19' })],
      {},
      urlAlert('certificates', 'shop-19'),
      'app_maintenance',
      "shop-19 is the new app of shop's upgrade in standby",
    ],
    [
      'a failed upgrade holds nothing',
      [open('upgrades', 'firing', { problem: 'failed' })],
      {},
      urlAlert('url_checks'),
      null,
    ],
    [
      'app stopped (firing) holds a failing URL',
      [open('app_state', 'firing')],
      {},
      urlAlert('url_checks'),
      'app_down',
      'app_state of shop',
    ],
    [
      'app stopped (firing) holds a certificate',
      [open('app_state', 'firing')],
      {},
      urlAlert('certificates'),
      'app_down',
      'app_state of shop',
    ],
    ['app stopped, still pending, holds nothing', [open('app_state', 'pending')], {}, urlAlert('url_checks'), null],
    ['app_down off', [open('app_state', 'firing')], { app_down: false }, urlAlert('url_checks'), null],
    [
      'maintenance and stopped: maintenance is the cause',
      [open('app_state', 'firing'), open('maintenance', 'pending')],
      {},
      urlAlert('url_checks'),
      'app_maintenance',
      'shop is in maintenance mode',
    ],
  ])('%s', (_name, sources, settings, alert, rule, summary) => {
    const cause = new Inhibitor({ ...ALL_ON, ...settings }, sources).causeFor(alert);
    if (rule === null) return void expect(cause).toBeUndefined();
    expect(cause).toMatchObject({ rule, summary });
  });
});

describe('the app rules through the outbox', () => {
  let receiver: WebhookReceiver;
  let h: Harness | undefined;

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await receiver.close();
  });

  const about = (check: CheckName, id: string, app = 'shop'): Finding => ({
    ...finding(`${app}-${id}`, { check, app, namespace: 'acme' }, 'critical'),
    summary: `${check} ${id} of ${app}`,
  });

  it('a stopped app is one page and one summary; its URL alerts follow when it runs again and they still fail', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)] });
    h.cycle('backups', [{ ...about('app_state', 'state'), summary: 'App shop (production) is stopped' }]);
    const pass = h.cycle('urls', [
      about('url_checks', 'www'),
      about('url_checks', 'admin'),
      about('certificates', 'www'),
      about('url_checks', 'www', 'blog'),
    ]);
    expect(pass).toEqual({ decisions: { inhibited: 3, deliver: 1 }, summaries: 1 });
    await h.notifier.deliverDue();
    const texts = receiver.received.map(payloadText);
    // The app's page, blog's URL, and the summary naming the cause: not four pages for one stop.
    expect(texts).toHaveLength(3);
    expect(texts.filter((t) => t.includes('3 alerts held back: App shop (production) is stopped'))).toHaveLength(1);

    // The app runs again; one URL still fails: it is told now, the others resolved quietly.
    h.clock.advance(MINUTE);
    h.cycle('backups', []);
    h.cycle('urls', [about('url_checks', 'www'), about('url_checks', 'www', 'blog')]);
    receiver.received.length = 0;
    await h.notifier.deliverDue();
    const after = receiver.received.map(payloadText).join('\n');
    expect(after).toContain('url_checks www of shop');
    expect(after).not.toContain('url_checks admin of shop');
    expect(h.rows(`status IN ('pending', 'held')`)).toEqual([]);
  });

  it('an app in maintenance pages nothing for its URLs, before or after its own alert fires; out of it, what still fails is told', async () => {
    h = Harness.open({ channels: [slackTo('ops', receiver.url)] });
    const inMaintenance: Finding = { ...about('maintenance', 'maint'), severity: 'warning', holdForMs: 2 * HOUR };
    h.cycle('maintenance', [inMaintenance]);
    const pass = h.cycle('urls', [about('url_checks', 'www'), about('certificates', 'www')]);
    expect(pass).toEqual({ decisions: { inhibited: 2 }, summaries: 0 });
    await h.notifier.deliverDue();
    expect(receiver.received).toHaveLength(0);

    // Two hours on, the maintenance alert itself fires: that is its one page, still no URL page.
    h.clock.advance(2 * HOUR);
    h.cycle('maintenance', [inMaintenance]);
    await h.notifier.deliverDue();
    expect(receiver.received.map(payloadText)).toEqual([expect.stringContaining('maintenance maint of shop')]);

    // Out of maintenance: the URL that still fails is told, the certificate that recovered is not.
    h.clock.advance(MINUTE);
    h.cycle('maintenance', []);
    h.cycle('urls', [about('url_checks', 'www')]);
    receiver.received.length = 0;
    await h.notifier.deliverDue();
    const after = receiver.received.map(payloadText).join('\n');
    expect(after).toContain('url_checks www of shop');
    expect(after).not.toContain('certificates www of shop');
    expect(h.rows(`status IN ('pending', 'held')`)).toEqual([]);
  });
});
