/**
 * The alert list of a large estate: the 500 most important open alerts at once (worst first), with
 * a notice of how many there are and a link to all of them.
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
    ['', 500, true],
    ['all=1', 501, false],
  ])('with 501 open alerts, query "%s" shows %i of them', (query, rows, capped) => {
    state = tempState();
    const store = state.open();
    const findings = Array.from({ length: 501 }, (_, i) =>
      finding(`run/${i}`, { severity: i === 500 ? 'critical' : 'warning' }),
    );
    store.transaction(() =>
      applyFindings(store, { job: 'runs', findings, now: NOW }, { forCycles: 1, repeatIntervalMs: 4 * HOUR }),
    );
    const page = String(alertsPage(store, config, ctx, new URLSearchParams(query)));
    expect(page.match(/<tr class="alert/g)).toHaveLength(rows);
    // The worst is never the one left out.
    expect(page).toContain('data-fingerprint="run/500"');
    expect(page.includes('Showing the 500 most important of 501 open alerts.')).toBe(capped);
  });
});
