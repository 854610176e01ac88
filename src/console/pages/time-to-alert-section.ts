/**
 * The headline figure of the sources page: how soon each check's new problems were told, from the
 * record's own time of the problem to the first delivery of its firing notification (what
 * `deploy_watchdog_time_to_alert_seconds` observes), p50 and p95 over the last day, read from the
 * state so every replica shows the same and a restart loses nothing.
 */
import { formatDuration } from '../../lib/format-duration.js';
import { timeToAlertSummary } from '../../notify/time-to-alert-store.js';
import type { Store } from '../../state/store.js';
import { html, type SafeHtml } from '../html.js';
import { dataTable } from '../layout.js';

/** The window the percentiles are taken over. */
export const TIME_TO_ALERT_WINDOW_MS = 24 * 60 * 60_000;

/** The time-to-alert section at `now`. */
export function timeToAlertSection(store: Store, now: number): SafeHtml {
  const rows = timeToAlertSummary(store, now - TIME_TO_ALERT_WINDOW_MS);
  const shown = (seconds: number) => (seconds < 1 ? '0s' : formatDuration(Math.round(seconds) * 1000, 'brief'));
  return html`<section>
    <h2>Time to alert</h2>
    <p class="hint">
      Last 24 hours · from the record's own time of a problem (a run's last update, a URL's last outside check, an
      app's last change) to the first delivery of its alert
    </p>
    ${dataTable(
      'time-to-alert',
      ['Check', 'Told', 'p50', 'p95'],
      rows.map(
        (r) =>
          html`<tr data-check="${r.check}">
            <td>${r.check}</td>
            <td>${r.count}</td>
            <td>${shown(r.p50)}</td>
            <td>${shown(r.p95)}</td>
          </tr>`,
      ),
      'No new problem told in the last 24 hours.',
    )}
  </section>`;
}
