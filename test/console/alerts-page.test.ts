/**
 * The alert list of a large estate, a page at a time: the most important open alerts first (worst
 * first), with how many there are in all and a link to the next page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { applyFindings } from '../../src/alerts/lifecycle.js';
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
