/**
 * The alert list of a large estate, a page at a time: the most important open alerts first (worst
 * first), with how many there are in all and a link to the next page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import { createSilence } from '../../src/alerts/silences.js';
import { parseConfig } from '../../src/config/load-config.js';
import { alertsPage } from '../../src/console/pages/alerts-page.js';
import { finding, HOUR, tempState, type TempState } from '../alerts/fixtures.js';

const NOW = Date.parse('2026-11-01T12:00:00Z');
const config = parseConfig('api: { base_url: https://dms.example.com, token: t }\n', {}, 'test.yaml');
const ctx = { who: 'console@loopback', csrf: 'x', now: NOW, session: false };
let state: TempState;
afterEach(() => state?.cleanup());

describe('the alert list', () => {
  it.each([
    ['', 100, true],
    ['size=500', 500, true],
    ['from=500', 1, false],
  ])('with 501 open alerts, query "%s" shows %i of them', (query, rows, more) => {
    state = tempState();
    const store = state.open();
    const findings = Array.from({ length: 501 }, (_, i) =>
      finding(`run/${i}`, { severity: i === 500 ? 'critical' : 'warning' }),
    );
    store.transaction(() =>
      applyFindings(store, { job: 'runs', findings, now: NOW }, { forCycles: 1, repeatIntervalMs: 4 * HOUR }),
    );
    const page = String(alertsPage({ ...ctx, store, config }, new URLSearchParams(query)));
    expect(page.match(/<tr class="alert/g)).toHaveLength(rows);
    // The worst comes first.
    expect(page.includes('data-fingerprint="run/500"')).toBe(query !== 'from=500');
    expect(page).toMatch(/Rows [\d,]+–[\d,]+ of 501/);
    expect(page.includes('rel="next"')).toBe(more);
  });
});

describe('searching the alert list', () => {
  function openAlerts(count: number) {
    state = tempState();
    const store = state.open();
    const findings = Array.from({ length: count }, (_, i) =>
      finding(`run/${i}`, {
        summary: `Update of app-${i}-prod failed`,
        labels: { check: 'failed_runs', app: `app-${i}-prod`, namespace: i % 2 === 0 ? 'acme' : 'wayne' },
      }),
    );
    store.transaction(() =>
      applyFindings(store, { job: 'runs', findings, now: NOW }, { forCycles: 1, repeatIntervalMs: 4 * HOUR }),
    );
    return store;
  }
  const shownFingerprints = (page: string) => [...page.matchAll(/data-fingerprint="([^"]+)"/g)].map((m) => m[1]);

  it('finds the one alert a person was paged for among 2,000, by its app, words in any case', () => {
    const store = openAlerts(2000);
    const page = String(alertsPage({ ...ctx, store, config }, new URLSearchParams({ q: 'APP-1234-prod  update' })));
    expect(shownFingerprints(page)).toEqual(['run/1234']);
    expect(page).toContain('1 of 2000 open shown');
    // The search stays in the box and in the grouping form.
    expect(page).toMatch(/<input[^>]*name="q"[^>]*value="APP-1234-prod {2}update"/);
  });

  it('filters by a label as name=value, keeping the search in the page links', () => {
    const store = openAlerts(300);
    const page = String(alertsPage({ ...ctx, store, config }, new URLSearchParams({ q: 'namespace=wayne' })));
    expect(shownFingerprints(page)).toHaveLength(100);
    expect(shownFingerprints(page).every((fp) => Number(fp!.split('/')[1]) % 2 === 1)).toBe(true);
    expect(page).toMatch(/Rows 1–100 of 150/);
    expect(page).toMatch(/rel="next" href="\/\?q=namespace%3Dwayne&amp;from=100"/);
  });

  it('finds a name with a hidden character by the text shown for it', () => {
    state = tempState();
    const store = state.open();
    const findings = [finding('run/1', { summary: 'App shop\u202egnp.exe is down' }), finding('run/2')];
    store.transaction(() =>
      applyFindings(store, { job: 'runs', findings, now: NOW }, { forCycles: 1, repeatIntervalMs: 4 * HOUR }),
    );
    // The page shows `shop\u{202e}gnp.exe`: that, copied into the box, finds it.
    const page = String(alertsPage({ ...ctx, store, config }, new URLSearchParams({ q: 'shop\\u{202e}gnp' })));
    expect(shownFingerprints(page)).toEqual(['run/1']);
  });

  it('shows the newest first when asked, the one just paged for on top, and keeps the order in links', () => {
    state = tempState();
    const store = state.open();
    const cycle = (now: number, ids: string[]) =>
      store.transaction(() =>
        applyFindings(
          store,
          {
            job: 'runs',
            findings: ids.map((id) => finding(id, { severity: id === 'run/old' ? 'critical' : 'warning' })),
            now,
          },
          { forCycles: 1, repeatIntervalMs: 4 * HOUR },
        ),
      );
    cycle(NOW - 2 * HOUR, ['run/old']);
    cycle(NOW - HOUR, ['run/old', 'run/middle']);
    cycle(NOW, ['run/old', 'run/middle', 'run/new']);
    const show = (query: Record<string, string>) =>
      String(alertsPage({ ...ctx, store, config }, new URLSearchParams(query)));
    expect(shownFingerprints(show({}))).toEqual(['run/old', 'run/middle', 'run/new']);
    const newest = show({ sort: 'newest', size: '2' });
    expect(shownFingerprints(newest)).toEqual(['run/new', 'run/middle']);
    expect(newest).toMatch(/rel="next" href="\/\?sort=newest&amp;from=2&amp;size=2"/);
    expect(newest).toMatch(/<option value="newest"\s+selected/);
  });

  it('shows only the firing alerts nobody has taken or silenced when asked, or only the acknowledged', () => {
    const store = openAlerts(4);
    acknowledge(store, { fingerprint: 'run/1', by: 'alice', via: 'console', comment: '', now: NOW });
    createSilence(store, {
      matchers: [{ name: 'app', op: '=', value: 'app-2-prod' }],
      startsAt: NOW - 1,
      durationMs: HOUR,
      reason: 'known',
      createdBy: 'bob',
      now: NOW - 1,
    });
    const show = (query: Record<string, string>) =>
      shownFingerprints(String(alertsPage({ ...ctx, store, config }, new URLSearchParams(query))));
    expect(show({})).toHaveLength(4);
    expect(show({ show: 'unhandled' }).sort()).toEqual(['run/0', 'run/3']);
    expect(show({ show: 'acknowledged' })).toEqual(['run/1']);
    expect(show({ show: 'silenced' })).toEqual(['run/2']);
    expect(show({ show: 'unhandled', q: 'app-3' })).toEqual(['run/3']);
  });

  it('says when nothing matches', () => {
    const store = openAlerts(3);
    const page = String(alertsPage({ ...ctx, store, config }, new URLSearchParams({ q: 'nothing-like-it' })));
    expect(shownFingerprints(page)).toEqual([]);
    expect(page).toContain('No open alert matches “nothing-like-it”.');
  });
});
