/**
 * What a message links to besides the app: the platform's pages (`notify.links`) and the runbooks
 * (`checks.<name>.runbook_url`, `notify.routes[].runbook_url`), from the config file as written,
 * each checked at load with a message that says what is wrong, and how a message picks them.
 */
import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { fillPage } from '../../src/config/link-schema.js';
import { ConfigError } from '../../src/config/config-error.js';
import { parseConfig } from '../../src/config/load-config.js';
import type { AlertsNotification } from '../../src/notify/channels/channel.js';
import { describeAlerts, describeEvent } from '../../src/notify/channels/describe.js';
import { groupDue } from '../../src/notify/grouping.js';
import { messageLinks, NO_LINKS, type MessageLinks } from '../../src/notify/message-links.js';
import type { OutboxRow } from '../../src/notify/outbox-store.js';
import { alertEvent, NOW } from './channels/fixtures.js';

const BASE = `api:
  base_url: https://manage.example.com
  token: tok
notify:
  channels: [{ name: console, type: log }]
`;

function problemOf(yaml: string): string {
  try {
    parseConfig(yaml, {}, 'x.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('links in the config', () => {
  it('reads page templates, check runbooks and route runbooks, naming unnamed routes as the router does', () => {
    const config = parseConfig(
      `${BASE}  links: { run: "https://manage.example.com/runs/{id}", app: "https://manage.example.com/apps/{id}?tab=main" }
  routes:
    - { name: prod, match: { environment_type: production }, channels: [console], runbook_url: https://wiki.example.com/oncall }
    - { channels: [console], runbook_url: https://wiki.example.com/everyone }
checks:
  failed_runs: { runbook_url: https://wiki.example.com/failed-runs }
  backups: { runbook_url: "https://wiki.example.com/backups#stale" }
`,
      {},
      'x.yaml',
    );
    expect(messageLinks(config)).toEqual({
      pages: { run: 'https://manage.example.com/runs/{id}', app: 'https://manage.example.com/apps/{id}?tab=main' },
      checkRunbooks: {
        failed_runs: 'https://wiki.example.com/failed-runs',
        backups: 'https://wiki.example.com/backups#stale',
      },
      routeRunbooks: { prod: 'https://wiki.example.com/oncall', 'route-2': 'https://wiki.example.com/everyone' },
    });
  });

  it('none configured: no links at all', () => {
    expect(messageLinks(parseConfig(BASE, {}, 'x.yaml'))).toEqual(NO_LINKS);
  });

  it.each([
    [
      'a template without {id}',
      `${BASE}  links: { run: "https://manage.example.com/runs" }`,
      /notify\.links\.run.*must hold \{id\}/s,
    ],
    [
      'another placeholder',
      `${BASE}  links: { run: "https://manage.example.com/{namespace}/runs/{id}" }`,
      /notify\.links\.run.*holds \{namespace\}: \{id\} is the only placeholder/s,
    ],
    [
      'a javascript: template',
      `${BASE}  links: { app: "javascript:alert({id})" }`,
      /notify\.links\.app.*must be an http\(s\) URL/s,
    ],
    ['a record type without pages', `${BASE}  links: { server: "https://x.example/{id}" }`, /notify\.links.*server/s],
    [
      'credentials in a runbook',
      `${BASE}checks:\n  stuck_runs: { runbook_url: "https://user:pw@wiki.example.com/x" }`,
      /checks\.stuck_runs\.runbook_url.*must not hold a user name or password/s,
    ],
    [
      'a route runbook that is no URL',
      `${BASE}  routes: [{ channels: [console], runbook_url: "see the wiki" }]`,
      /notify\.routes\[0\]\.runbook_url.*must be an http\(s\) URL/s,
    ],
  ])('refuses %s, naming the key', (_what, yaml, message) => {
    expect(problemOf(yaml)).toMatch(message);
  });

  it.each([
    [5981, 'https://manage.example.com/runs/5981'],
    ['a/b?c#d', 'https://manage.example.com/runs/a%2Fb%3Fc%23d'],
    ['../../admin', 'https://manage.example.com/runs/..%2F..%2Fadmin'],
  ])('fills {id} with %j URL-encoded, so an id never adds a path, query or fragment', (id, url) => {
    expect(fillPage('https://manage.example.com/runs/{id}', id)).toBe(url);
  });
});

const LINKS: MessageLinks = {
  pages: { app: 'https://m.example.com/apps/{id}', run: 'https://m.example.com/runs/{id}' },
  checkRunbooks: { failed_runs: 'https://wiki.example.com/failed-runs', backups: 'https://wiki.example.com/backups' },
  routeRunbooks: { prod: 'https://wiki.example.com/oncall', other: 'https://wiki.example.com/failed-runs' },
};

describe('the links of a message', () => {
  it.each<[string, AlertEvent['subject'], { label: string; url: string } | null]>([
    ['a run', { type: 'run', id: 5981 }, { label: 'Run page', url: 'https://m.example.com/runs/5981' }],
    ['an app', { type: 'app', id: 3 }, { label: 'App page', url: 'https://m.example.com/apps/3' }],
    ['a backup, with no template configured', { type: 'backup', id: 77 }, null],
    ['a URL: the platform has no page for one', { type: 'url', id: 40 }, null],
    ['a record without an id', { type: 'run' }, null],
  ])('an event about %s links its page: %j', (_what, subject, page) => {
    expect(describeEvent(alertEvent({ subject }), NOW, new Set(), LINKS).page).toEqual(page);
  });

  const message = (events: AlertEvent[], routes?: string[]): AlertsNotification => ({
    type: 'alerts',
    group: {},
    events,
    omitted: 0,
    ...(routes ? { routes } : {}),
  });
  const backups = alertEvent({ id: 2, check: 'backups', labels: { check: 'backups', app: 'shop' } });

  it.each<[string, AlertsNotification, { label: string; url: string }[]]>([
    ['one check', message([alertEvent()]), [{ label: 'Runbook', url: 'https://wiki.example.com/failed-runs' }]],
    [
      "its route's first, then each check's",
      message([alertEvent(), backups], ['prod']),
      [
        { label: 'Runbook: prod', url: 'https://wiki.example.com/oncall' },
        { label: 'Runbook: failed runs', url: 'https://wiki.example.com/failed-runs' },
        { label: 'Runbook: backup problems', url: 'https://wiki.example.com/backups' },
      ],
    ],
    [
      'one address once, whoever names it',
      message([alertEvent()], ['other']),
      [{ label: 'Runbook', url: 'https://wiki.example.com/failed-runs' }],
    ],
    [
      'a route without one',
      message([backups], ['default']),
      [{ label: 'Runbook', url: 'https://wiki.example.com/backups' }],
    ],
    ['all resolved: nothing left to do', message([alertEvent({ kind: 'resolved' })], ['prod']), []],
  ])('runbooks: %s', (_what, n, runbooks) => {
    expect(describeAlerts(n, NOW, { links: LINKS }).runbooks).toEqual(runbooks);
  });

  it('one next step per check with firing events, each once, none for resolved ones', () => {
    const stale = alertEvent({ id: 5, check: 'backups', labels: { check: 'backups', app: 'shop', problem: 'stale' } });
    const resolved = alertEvent({ id: 4, kind: 'resolved', check: 'url_checks', labels: { check: 'url_checks' } });
    const d = describeAlerts(message([alertEvent(), alertEvent({ id: 3 }), stale, backups, resolved]), NOW);
    expect(d.nextSteps).toEqual([
      "Read the failed step's log, fix the cause, then retry the run.",
      "Take a backup now, then find why the scheduled one did not succeed (the backup run's log).",
      // `backups` carries no problem label, so its check has nothing to say for sure; url_checks is over.
    ]);
  });

  it('groups the rows of one message from several routes and says which routes they came by', () => {
    const row = (id: number, route: string): OutboxRow =>
      ({
        id,
        channel: 'ops-slack',
        route,
        source: 'event',
        payload: JSON.stringify(alertEvent({ id })),
        groupKey: '{"check":"failed_runs"}',
      }) as OutboxRow;
    const [out] = groupDue([row(1, 'prod'), row(2, 'default'), row(3, 'prod')], 10);
    expect(out?.notification).toMatchObject({ type: 'alerts', routes: ['prod', 'default'] });
  });
});
