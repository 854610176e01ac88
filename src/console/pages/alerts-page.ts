/**
 * `/`: the open alerts, grouped by a label (check unless `?group=` says otherwise), worst first
 * in each group, with severity, age, labels, and why each one is or is not being told (silence,
 * inhibition, pending, and each channel's last decision). The same rows as `deploy-watchdog alerts`.
 * A firing alert has a button that acknowledges it (or gives its acknowledgement back) from here.
 * A page at a time (`pager.ts`), the groups made of that page's rows. `?q=` keeps the alerts whose
 * text holds every word of it (`matchesSearch`): the one a person was paged for among thousands;
 * `?show=` keeps those in one state (firing with nobody on it, acknowledged, silenced, pending);
 * `?sort=newest` puts the newest on top.
 */
import { openAlertsView, type OpenAlertView } from '../../alerts/open-alerts-view.js';
import { deliveryStates, type DeliveryState } from '../delivery-state.js';
import { html, type SafeHtml } from '../html.js';
import { age, dataTable, labelChips, notice, page, severityBadge, type PageContext } from '../layout.js';
import { alertId } from '../../alerts/alert-id.js';
import { alertPath } from '../../lib/console-paths.js';
import { visibleText } from '../../lib/visible-text.js';
import { getOrAdd } from '../../lib/get-or-add.js';
import { pager } from '../pager.js';
import { acknowledgeForm, type ListView } from './acknowledge-form.js';
import type { PageNotice } from './alert-page.js';
import { deliveryStateList } from './delivery-state-list.js';

/** The labels the list can be grouped by; the first is the default. */
const GROUP_LABELS = ['check', 'severity', 'environment_type', 'namespace', 'project', 'app', 'server'] as const;

type GroupLabel = (typeof GROUP_LABELS)[number];

/** The orders the list can be shown in; the first is the default (as `alerts` lists them). */
const SORTS = { worst: 'worst first', newest: 'newest first' } as const;

type Sort = keyof typeof SORTS;

/** Which of the open alerts the list shows; the first is the default. */
const SHOWS = {
  all: (_view: OpenAlertView) => true,
  // Firing, and nobody has it: neither acknowledged nor silenced.
  unhandled: (view: OpenAlertView) =>
    view.alert.status === 'firing' && view.alert.acknowledgement === null && view.silence === undefined,
  acknowledged: (view: OpenAlertView) => view.alert.acknowledgement !== null,
  silenced: (view: OpenAlertView) => view.silence !== undefined,
  pending: (view: OpenAlertView) => view.alert.status === 'pending',
} as const;

type Show = keyof typeof SHOWS;

/** What the Show select says of each. */
const SHOW_LABELS: Readonly<Record<Show, string>> = {
  all: 'all open',
  unhandled: 'firing, nobody on it',
  acknowledged: 'acknowledged',
  silenced: 'silenced',
  pending: 'pending',
};

/** The longest search taken (what the box takes): a longer query string is cut, not scanned. */
const SEARCH_MAX = 200;

/** The alert list; `said`, what a form just did (an alert acknowledged from here). */
export function alertsPage(ctx: PageContext, query: URLSearchParams, said?: PageNotice): SafeHtml {
  const asked = query.get('group') ?? '';
  const group: GroupLabel = (GROUP_LABELS as readonly string[]).includes(asked) ? (asked as GroupLabel) : 'check';
  const search = (query.get('q') ?? '').slice(0, SEARCH_MAX).trim();
  const sort: Sort = query.get('sort') === 'newest' ? 'newest' : 'worst';
  const askedShow = query.get('show') ?? '';
  const show: Show = Object.hasOwn(SHOWS, askedShow) ? (askedShow as Show) : 'all';
  const open = openAlertsView(ctx.store, ctx.now);
  const matching = open.filter((view) => SHOWS[show](view) && (search === '' || matchesSearch(view, search)));
  // The newest first: the alert just paged for on top, whatever its severity.
  const found = sort === 'newest' ? [...matching].sort((a, b) => b.since - a.since) : matching;
  const deliveryOf = deliveryStates(ctx.store, ctx.config, found, ctx.now);
  // A page a browser shows at once: the most important first, the rest on the next pages.
  // What this page shows, kept by its links (the pager adds its own from and size) and, with the
  // page it is on, by the forms that come back to it.
  const keep = {
    q: search === '' ? undefined : search,
    show: show === 'all' ? undefined : show,
    sort: sort === 'worst' ? undefined : sort,
    group: group === 'check' ? undefined : group,
  };
  const kept: ListView = { ...keep, from: query.get('from') ?? undefined, size: query.get('size') ?? undefined };
  const shown = pager(query, found, (alert) => alertRow(alert, deliveryOf(alert), ctx, kept), { path: '/', keep });
  const groups = new Map<string, SafeHtml[]>();
  shown.items.forEach((view, i) => getOrAdd(groups, groupValue(view, group), () => []).push(shown.rows[i]!));
  const firing = open.filter((v) => v.alert.status === 'firing').length;
  const silenced = open.filter((v) => v.silence !== undefined).length;
  const acknowledged = open.filter((v) => v.alert.acknowledgement !== null).length;
  const done = query.get('fp');
  const doneAlert = done === null ? undefined : open.find((v) => v.alert.fingerprint === done)?.alert;
  const body = html` <div class="title-row">
      <h1>Open alerts</h1>
      <p class="counts">
        <strong>${open.length}</strong> open · ${firing} firing · ${open.length - firing} pending · ${silenced} silenced ·
        ${acknowledged} acknowledged${search === '' && show === 'all' ? '' : html` · <strong>${found.length} of ${open.length} open shown</strong>`}
      </p>
      <form method="get" action="/" class="inline">
        <label
          >Search
          <input
            type="search"
            name="q"
            value="${search}"
            maxlength="${SEARCH_MAX}"
            placeholder="app, namespace=acme, summary words, id"
        /></label>
        ${choice('Show', 'show', SHOW_LABELS, show)} ${choice('Sort', 'sort', SORTS, sort)}
        ${choice('Group by', 'group', Object.fromEntries(GROUP_LABELS.map((g) => [g, g])), group)}
        <noscript><button>Group</button></noscript>
      </form>
    </div>
    ${said ? notice(said.kind, html`${said.text}${doneAlert ? html` (<a href="${alertPath(doneAlert.fingerprint)}">${doneAlert.summary}</a>)` : ''}`) : ''}
    ${shown.nav}
    ${
      open.length === 0
        ? html`<p class="empty">No open alerts.</p>`
        : found.length === 0
          ? html`<p class="empty">${noneShown(show, search)}</p>`
          : [...groups].map(
              ([value, rows]) =>
                html` <section class="group">
                <h2>
                  <span class="group-label">${group}</span> ${value || html`<em>none</em>`}
                  <span class="count">${rows.length}</span>
                </h2>
                ${dataTable('alerts', ['Severity', 'Status', 'Age', 'Alert', 'Notifications'], rows)}
              </section>`,
            )
    }`;
  return page({ title: 'Alerts', current: '/', ctx, body });
}

function alertRow(view: OpenAlertView, delivery: DeliveryState, ctx: PageContext, list: ListView): SafeHtml {
  const { alert } = view;
  const classes = ['alert', ...(view.silence ? ['silenced'] : []), ...(alert.acknowledgement ? ['acknowledged'] : [])];
  return html`<tr class="${classes.join(' ')}" data-fingerprint="${alert.fingerprint}">
    <td>${severityBadge(alert.severity)}</td>
    <td>
      <span class="status status-${alert.status}">${alert.status}</span>${
        alert.acknowledgement ? html`<br /><span class="status acknowledged">acknowledged</span>` : ''
      }
      ${acknowledgeForm(alert, ctx, list)}
    </td>
    <td>${age(view.since, ctx.now)}</td>
    <td>
      <a class="summary" href="${alertPath(alert.fingerprint)}">${alert.summary}</a
      ><br />${labelChips(alert.labels, ['check'])}
    </td>
    <td>${deliveryStateList(delivery)}</td>
  </tr>`;
}

/** A select of the list's form, submitted when it changes: `options` maps each value to its label. */
function choice(label: string, name: string, options: Readonly<Record<string, string>>, chosen: string): SafeHtml {
  return html`<label
    >${label}
    <select name="${name}" data-autosubmit>
      ${Object.entries(options).map(
        ([value, text]) => html`<option value="${value}" ${value === chosen ? html` selected` : ''}>${text}</option>`,
      )}
    </select></label
  >`;
}

/** What the list says when no open alert is shown. */
function noneShown(show: Show, search: string): string {
  const matching = search === '' ? '' : ` matches “${search}”`;
  if (show === 'all') return `No open alert${matching}.`;
  return `No open alert is ${SHOW_LABELS[show]}${matching ? ` and${matching}` : ''}.`;
}

/**
 * Whether every word of `search` (any case) is in the alert's summary, its labels as
 * `name=value`, its severity, status, fingerprint or short id (as `alerts` and `ack` show it),
 * each compared as the page shows it (a hidden character written out, `visibleText`).
 */
function matchesSearch(view: OpenAlertView, search: string): boolean {
  const { alert } = view;
  const labels = Object.entries(alert.labels).map(([name, value]) => `${name}=${value ?? ''}`);
  const text = [alert.summary, ...labels, alert.severity, alert.status, alert.fingerprint, alertId(alert.fingerprint)]
    .map((part) => visibleText(part))
    .join('\n')
    .toLowerCase();
  return visibleText(search)
    .toLowerCase()
    .split(/\s+/)
    .every((word) => text.includes(word));
}

function groupValue(view: OpenAlertView, group: GroupLabel): string {
  if (group === 'severity') return view.alert.severity;
  if (group === 'check') return view.alert.check;
  return view.alert.labels[group] ?? '';
}
