import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import type { Notification } from '../../../src/notify/channels/channel.js';
import {
  renderWebhook,
  ZERO_TIME,
  type AlertmanagerMessage,
  type WebhookRenderOptions,
} from '../../../src/notify/channels/webhook.js';
import type { MessageLinks } from '../../../src/notify/message-links.js';
import { v4Problems } from '../alertmanager-receiver.js';
import { alertEvent, alerts, NOW } from './fixtures.js';

const LINKS: MessageLinks = {
  pages: { run: 'https://manage.example.com/runs/{id}' },
  checkRunbooks: { failed_runs: 'https://wiki.example.com/runbooks/failed-runs' },
  routeRunbooks: { 'prod-oncall': 'https://wiki.example.com/oncall/production' },
};

const OPTIONS: WebhookRenderOptions = {
  now: NOW,
  channelName: 'oncall',
  externalUrl: 'https://watchdog.example.com',
  maxAlerts: 0,
  links: LINKS,
};

/** Renders, and checks first that an Alertmanager receiver would take it. */
function render(n: Notification, over: Partial<WebhookRenderOptions> = {}): AlertmanagerMessage {
  const payload = renderWebhook(n, { ...OPTIONS, ...over });
  expect(v4Problems(JSON.parse(JSON.stringify(payload)))).toEqual([]);
  return payload;
}

const run123 = (over: Partial<AlertEvent> = {}) => alertEvent({ subject: { type: 'run', id: 123 }, ...over });

const resolved = (over: Partial<AlertEvent> = {}) =>
  run123({
    kind: 'resolved',
    endsAt: '2026-11-01T11:42:00.000Z',
    at: '2026-11-01T11:42:00.000Z',
    resolution: 'run #130 succeeded',
    ...over,
  });

describe('renderWebhook: a firing alert', () => {
  const payload = render({ ...alerts([run123()]), routes: ['prod-oncall'] });
  const [alert] = payload.alerts;

  it.each<[string, unknown]>([
    ['version', '4'],
    ['receiver', 'oncall'],
    ['status', 'firing'],
    ['groupKey', '{}/{channel="oncall"}:{check="failed_runs", environment_type="production"}'],
    ['truncatedAlerts', 0],
    ['groupLabels', { check: 'failed_runs', environment_type: 'production' }],
    ['externalURL', 'https://watchdog.example.com'],
  ])('%s is %j', (field, value) => {
    expect(payload[field as keyof AlertmanagerMessage]).toEqual(value);
  });

  it.each<[string, unknown]>([
    ['status', 'firing'],
    ['startsAt', '2026-11-01T10:00:00Z'],
    ['endsAt', ZERO_TIME],
    ['generatorURL', 'https://manage.example.com/runs/123'],
    ['fingerprint', 'failed_runs/run/123'],
  ])('its alert: %s is %j', (field, value) => {
    expect(alert?.[field as keyof typeof alert]).toEqual(value);
  });

  it('labels it with its own labels, its check as alertname and its severity', () => {
    expect(alert?.labels).toEqual({
      alertname: 'failed_runs',
      severity: 'critical',
      check: 'failed_runs',
      namespace: 'acme',
      project: 'webshop',
      environment_type: 'production',
      app: 'shop',
    });
  });

  it('says what it is, what to do and where to read more, as annotations', () => {
    expect(alert?.annotations).toEqual({
      summary: 'Update of shop (production) failed at step install',
      description: [
        'CRITICAL',
        'Environment: production',
        'Project: webshop',
        'Namespace: acme',
        'Run: #123',
        'Reason: exit code 1',
        'Since: 2026-11-01 10:00 UTC (2h ago)',
      ].join('\n'),
      runbook_url: 'https://wiki.example.com/runbooks/failed-runs',
      next_step: "Read the failed step's log, fix the cause, then retry the run.",
      url: 'https://shop.example.com/',
      silence: "deploy-watchdog silence --match check=failed_runs --match app=shop --for 2h --reason '…'",
    });
  });

  it('has, with one alert, its labels and annotations in common', () => {
    expect(payload.commonLabels).toEqual(alert?.labels);
    expect(payload.commonAnnotations).toEqual(alert?.annotations);
  });

  it("falls back to the route's runbook when its check has none", () => {
    const other = render(
      { ...alerts([run123()]), routes: ['prod-oncall'] },
      { links: { ...LINKS, checkRunbooks: {} } },
    );
    expect(other.alerts[0]?.annotations.runbook_url).toBe('https://wiki.example.com/oncall/production');
  });

  it('sends an empty externalURL and generatorURL when none is configured', () => {
    const bare = render(alerts([run123()]), { externalUrl: '', links: undefined });
    expect([bare.externalURL, bare.alerts[0]?.generatorURL]).toEqual(['', '']);
  });
});

describe('renderWebhook: resolved', () => {
  const payload = render(alerts([resolved()]));
  const [alert] = payload.alerts;

  it('is resolved, ending when it resolved (RFC 3339), its fingerprint unchanged', () => {
    expect(payload.status).toBe('resolved');
    expect(alert).toMatchObject({
      status: 'resolved',
      startsAt: '2026-11-01T10:00:00Z',
      endsAt: '2026-11-01T11:42:00Z',
      fingerprint: 'failed_runs/run/123',
    });
  });

  it('says what was wrong as over, and why, without a next step or a silence', () => {
    expect(alert?.annotations).toEqual({
      summary: 'Update of shop (production) failed at step install',
      description: [
        'RESOLVED after 1h 42m',
        'was: Update of shop (production) failed at step install',
        'Why: run #130 succeeded',
      ].join('\n'),
      runbook_url: 'https://wiki.example.com/runbooks/failed-runs',
      url: 'https://shop.example.com/',
    });
  });
});

describe('renderWebhook: the group', () => {
  it.each<[string, AlertEvent['kind']]>([
    ['firing', 'firing'],
    ['repeat', 'repeat'],
    ['escalated', 'escalated'],
    ['resolved', 'resolved'],
  ])('has one key for a %s event as for every other of the group', (_name, kind) => {
    const event = kind === 'resolved' ? resolved() : run123({ kind });
    expect(render(alerts([event])).groupKey).toBe(render(alerts([run123()])).groupKey);
  });

  it('has another key on another channel, or for another group', () => {
    const key = render(alerts([run123()])).groupKey;
    expect(render(alerts([run123()]), { channelName: 'other' }).groupKey).not.toBe(key);
    const event = run123({ labels: { check: 'failed_runs', environment_type: 'staging', app: 'shop' } });
    const staging = { ...alerts([event]), group: { check: 'failed_runs', environment_type: 'staging' } };
    expect(render(staging).groupKey).not.toBe(key);
  });

  it.each<[string, 'firing' | 'resolved', AlertEvent[], number, number]>([
    ['one firing', 'firing', [run123()], 0, 0],
    ['one resolved', 'resolved', [resolved()], 0, 0],
    ['firing and resolved', 'firing', [run123(), resolved({ id: 2, fingerprint: 'failed_runs/run/124' })], 0, 0],
    ['resolved shown, firing ones left out', 'firing', [resolved()], 3, 1],
    ['resolved shown, resolved ones left out', 'resolved', [resolved()], 3, 3],
  ])('%s: the group is %s', (_name, status, events, omitted, omittedResolved) => {
    expect(render({ ...alerts(events, omitted), omittedResolved }).status).toBe(status);
  });

  it('lists an alert once, as it is now: a firing and its resolve that waited together say resolved', () => {
    const shown = (events: AlertEvent[]) => render(alerts(events)).alerts.map((a) => a.status);
    expect(render(alerts([run123(), resolved({ id: 2 })])).status).toBe('resolved');
    expect(shown([run123(), resolved({ id: 2 })])).toEqual(['resolved']);
    // And fired again after: it fires.
    expect(shown([run123(), run123({ id: 3 }), resolved({ id: 2 })])).toEqual(['firing']);
  });

  it('has in common only what every alert shares', () => {
    const other = run123({
      id: 2,
      fingerprint: 'failed_runs/run/124',
      summary: 'Update of blog (production) failed at step install',
      labels: { check: 'failed_runs', namespace: 'acme', environment_type: 'production', app: 'blog' },
    });
    const payload = render(alerts([run123(), other]));
    expect(payload.commonLabels).toEqual({
      alertname: 'failed_runs',
      severity: 'critical',
      check: 'failed_runs',
      namespace: 'acme',
      environment_type: 'production',
    });
    expect(Object.keys(payload.commonAnnotations).sort()).toEqual(['next_step', 'runbook_url', 'url']);
  });

  it("quotes the receiver's name as Alertmanager does (regexp.QuoteMeta)", () => {
    expect(render(alerts([run123()]), { channelName: 'ops.pager+1' }).receiver).toBe('ops\\.pager\\+1');
  });
});

describe('renderWebhook: max_alerts', () => {
  const events = (n: number) =>
    Array.from({ length: n }, (_, i) => run123({ id: i + 1, fingerprint: `failed_runs/run/${i + 1}` }));

  it.each<[number, number, number, number, number]>([
    // events, left out before (max_items_per_message), max_alerts → alerts, truncatedAlerts
    [5, 0, 0, 5, 0],
    [5, 0, 5, 5, 0],
    [5, 0, 2, 2, 3],
    [5, 4, 0, 5, 4],
    [5, 4, 2, 2, 7],
    [1, 0, 1, 1, 0],
  ])('%i events, %i left out, max_alerts %i: %i alerts, %i truncated', (n, omitted, maxAlerts, kept, truncated) => {
    const payload = render(alerts(events(n), omitted), { maxAlerts });
    expect(payload.alerts.map((a) => a.fingerprint)).toEqual(
      events(n)
        .slice(0, kept)
        .map((e) => e.fingerprint),
    );
    expect(payload.truncatedAlerts).toBe(truncated);
  });
});

describe('renderWebhook: times', () => {
  it.each<[string, string]>([
    ['2026-11-01T10:00:00.000Z', '2026-11-01T10:00:00Z'],
    ['2026-11-01T10:00:00.250Z', '2026-11-01T10:00:00.250Z'],
    ['2026-11-01T12:00:00+02:00', '2026-11-01T10:00:00Z'],
  ])('startsAt %s is sent as %s', (startsAt, sent) => {
    expect(render(alerts([run123({ startsAt })])).alerts[0]?.startsAt).toBe(sent);
  });

  it('ends a resolved alert without an end time when it was written', () => {
    expect(render(alerts([resolved({ endsAt: null })])).alerts[0]?.endsAt).toBe('2026-11-01T11:42:00Z');
  });
});

describe('renderWebhook: the service text is data', () => {
  const hostile = run123({
    summary: 'Update of <b>shop</b> failed <!channel> & "quoted"\nBcc: victim@evil.example',
    labels: { check: 'failed_runs', environment_type: 'production', app: 'shop\u202Egnp.exe' },
    url: 'javascript:window.__pwned=1',
    facts: [{ label: 'Reason', value: 'line one\r\nSince: forged' }],
  });
  const payload = render(alerts([hostile]));
  const [alert] = payload.alerts;

  it('keeps markup as the characters it is: no HTML or mrkdwn escaping', () => {
    expect(alert?.annotations.summary).toBe(
      'Update of <b>shop</b> failed <!channel> & "quoted" Bcc: victim@evil.example',
    );
    expect(JSON.stringify(payload)).not.toMatch(/&amp;|&lt;|\\u003c/);
  });

  it('writes out what hides or reorders text, in labels too', () => {
    expect(alert?.labels.app).toBe('shop\\u{202e}gnp.exe');
  });

  it('folds a line break, so no line of the description can be forged', () => {
    expect(alert?.annotations.description?.split('\n')).toContain('Reason: line one Since: forged');
  });

  it('sends no link that is not http(s)', () => {
    expect(alert?.annotations).not.toHaveProperty('url');
    const unsafe = render(alerts([run123()]), {
      links: { ...LINKS, checkRunbooks: { failed_runs: 'javascript:alert(1)' } },
    });
    expect(unsafe.alerts[0]?.annotations).not.toHaveProperty('runbook_url');
  });
});

describe('renderWebhook: a notice', () => {
  const notice: Notification = {
    type: 'notice',
    topic: 'test',
    title: 'deploy-watchdog test message',
    severity: 'ok',
    fields: [{ label: 'Sent', value: '2026-11-01T12:00:00.000Z' }],
    lines: ['If you can read this, deploy-watchdog can reach this channel.'],
  };

  it('is one alert already over, so no receiver opens an incident nothing would close', () => {
    const payload = render(notice);
    expect(payload).toMatchObject({
      status: 'resolved',
      groupLabels: { alertname: 'notice', topic: 'test' },
      groupKey: '{}/{channel="oncall"}:{alertname="notice", topic="test"}',
      truncatedAlerts: 0,
    });
    expect(payload.alerts).toEqual([
      {
        status: 'resolved',
        labels: { alertname: 'notice', topic: 'test' },
        annotations: {
          summary: 'deploy-watchdog test message',
          description: 'Sent: 2026-11-01T12:00:00.000Z\nIf you can read this, deploy-watchdog can reach this channel.',
        },
        startsAt: '2026-11-01T12:00:00Z',
        endsAt: '2026-11-01T12:00:00Z',
        generatorURL: '',
        fingerprint: expect.stringMatching(/^notice\/[0-9a-f]{16}$/),
      },
    ]);
  });

  it('is the same alert when sent again later, another notice another', () => {
    const fingerprint = (n: Notification, now: number) => render(n, { now }).alerts[0]?.fingerprint;
    expect(fingerprint(notice, NOW + 60_000)).toBe(fingerprint(notice, NOW));
    expect(fingerprint({ ...notice, title: 'another' }, NOW)).not.toBe(fingerprint(notice, NOW));
  });

  it('carries a severity label only when it has a severity of an alert', () => {
    const outcome: Notification = { type: 'notice', topic: 'remediation', title: 'Retry failed', severity: 'warning' };
    expect(render(outcome).alerts[0]?.labels).toEqual({
      alertname: 'notice',
      topic: 'remediation',
      severity: 'warning',
    });
  });
});
