/**
 * `/silences`: the silences in force (every one with `?all=1`), each with how many open alerts it
 * covers, who made it and why, and a form to end it (with a comment: who ended it and why are
 * recorded). The same rows as `deploy-watchdog silences`, a page at a time (`pager.ts`).
 */
import { describeMatchers } from '../../alerts/silences.js';
import { silenceListing, type SilenceListing } from '../../alerts/silence-listing.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { csrfField, dataTable, notice, page, time, type PageContext } from '../layout.js';
import { pager } from '../pager.js';

const HEADINGS = ['Id', 'State', 'Matchers', 'From', 'Until', 'Open alerts', 'Author', 'Reason', ''];

/**
 * The silence list, with a notice on top of what was just done (`?created=ID`, `?expired=ID`, the
 * redirect after a form) or of what went wrong with a form (`problem`).
 */
export function silencesPage(ctx: PageContext, query: URLSearchParams, problem?: string): SafeHtml {
  const all = query.get('all') === '1';
  const rows = silenceListing(ctx.store, { now: ctx.now, includeExpired: all });
  const created = query.get('created');
  const expired = query.get('expired');
  const marked = query.get('id') ?? created ?? '';
  const shown = pager(query, rows, (row) => silenceRow(row, ctx, row.silence.id === marked), {
    path: '/silences',
    keep: { all: all ? '1' : undefined },
    focus: rows.findIndex((row) => row.silence.id === marked),
  });
  const flash: { kind: 'ok' | 'error'; text: HtmlValue } | undefined =
    problem !== undefined
      ? { kind: 'error', text: problem }
      : created !== null
        ? { kind: 'ok', text: `Silence ${created} created.` }
        : expired !== null
          ? { kind: 'ok', text: `Silence ${expired} ended.` }
          : undefined;
  const body = html` <div class="title-row">
      <h1>Silences</h1>
      <p class="counts">
        ${all ? html`every silence · <a href="/silences">in force only</a>` : html`in force or starting later · <a href="/silences?all=1">include ended ones</a>`}
      </p>
      <a class="button" href="/silences/new">New silence</a>
    </div>
    ${flash ? notice(flash.kind, flash.text) : ''}
    ${shown.nav}${dataTable('silences', HEADINGS, shown.rows, all ? 'No silences.' : 'No silence in force.')}`;
  return page({ title: 'Silences', current: '/silences', ctx, body });
}

function silenceRow(row: SilenceListing, ctx: PageContext, marked: boolean): SafeHtml {
  const s = row.silence;
  return html`<tr
    id="silence-${s.id}"
    class="silence state-${row.state}${marked ? ' marked' : ''}"
    data-silence="${s.id}"
  >
    <td><code>${s.id}</code></td>
    <td>${row.state}</td>
    <td><code>${describeMatchers(s.matchers)}</code></td>
    <td>${time(s.startsAt)}</td>
    <td>${time(row.until)}</td>
    <td>${row.openAlerts}</td>
    <td>${s.createdBy}</td>
    <td>
      ${s.reason}${s.expiredBy ? html`<br /><span class="muted">ended by ${s.expiredBy}${s.expireReason ? `: ${s.expireReason}` : ''}</span>` : ''}
    </td>
    <td>
      ${
        row.state === 'expired'
          ? ''
          : html`<form method="post" action="/silences/expire" class="expire">
              ${csrfField(ctx)}<input type="hidden" name="id" value="${s.id}" /><input
                name="comment"
                required
                placeholder="why end it now"
                aria-label="Why end silence ${s.id}"
              /><button>Expire</button>
            </form>`
      }
    </td>
  </tr>`;
}
