/**
 * `/alert?fp=…`: one alert and its timeline. What it is (summary, facts, labels, the platform's
 * page), why it is or is not being told now, then everything that happened to it, oldest first:
 * its events (firing, repeat, escalated, resolved, with the lifecycle's reason; acknowledged and
 * unacknowledged, with who, where and why), under each event
 * the notification of every channel with its delivery decision and status (the outbox), and the
 * remediation audit of it, and the clicks on its Slack buttons (those refused or too late too);
 * then its remediation attempts with their idempotency keys and outcomes.
 * A firing alert has a button to acknowledge it (or give its acknowledgement back), with an
 * optional comment. The timeline is shown a page at a time (`pager.ts`), the newest page first.
 */
import { eventsOfAlert, alertStoreOf, type AlertRow } from '../../alerts/alert-store.js';
import { UNDERWAY_SINCE } from '../../detectors/finding.js';
import { formatMatcher } from '../../alerts/matchers.js';
import { openAlertsView, sinceOf } from '../../alerts/open-alerts-view.js';
import { silenceMatchersFor } from '../../alerts/silence-matchers.js';
import { notificationsOf, type OutboxRow } from '../../notify/outbox-store.js';
import { listInteractions, type InteractionRow } from '../../interactions/interaction-audit-store.js';
import { listAttempts, listAudit, type AttemptRow, type AuditRow } from '../../remediation/remediation-store.js';
import type { Store } from '../../state/store.js';
import { deliveryStates, decisionText } from '../delivery-state.js';
import { html, safeLink, type SafeHtml } from '../html.js';
import { age, dataTable, labelChips, notice, page, severityBadge, time, type PageContext } from '../layout.js';
import { consolePath } from '../../lib/console-paths.js';
import { isAcknowledgementKind, type AcknowledgementNote, type AlertEvent } from '../../alerts/alert-event.js';
import { formatUtc } from '../../lib/format-utc.js';
import { pager } from '../pager.js';
import { acknowledgeForm } from './acknowledge-form.js';
import { remediateForm } from './remediate-form.js';
import { deliveryStateList } from './delivery-state-list.js';

/** What just happened, said at the top of the page. */
export interface PageNotice {
  kind: 'ok' | 'warn' | 'error';
  text: string;
}

/** The alert's page, or undefined when no alert has this fingerprint (any more). */
export function alertPage(
  ctx: PageContext,
  fingerprint: string,
  said?: PageNotice,
  query: URLSearchParams = new URLSearchParams(),
): SafeHtml | undefined {
  const { store, config } = ctx;
  const alert = alertStoreOf(store).get(fingerprint);
  if (!alert) return undefined;
  const open = openAlertsView(store, ctx.now);
  const view = open.find((v) => v.alert.fingerprint === fingerprint);
  const delivery = view && deliveryStates(store, config, open, ctx.now)(view);
  const matchers = silenceMatchersFor(alert);
  const silenceHref =
    matchers === null ? undefined : consolePath('/silences/new', { matchers: matchers.map(formatMatcher).join('\n') });
  const body = html`
    <p class="crumbs"><a href="/">Alerts</a> &rsaquo;</p>
    ${said ? notice(said.kind, said.text) : ''}
    <h1 class="alert-title">${severityBadge(alert.severity)} ${alert.summary}</h1>
    <p class="meta">
      <span class="status status-${alert.status}">${alert.status}</span>
      ${alert.status === 'resolved' && alert.resolvedAt !== null ? html`resolved ${time(alert.resolvedAt)}` : html`for ${age(sinceOf(alert), ctx.now)}`}
      · check <code>${alert.check}</code> · job
      <code>${alert.job}</code> ${alert.url ? html`· ${safeLink(alert.url, 'open on the platform')}` : ''}
    </p>
    ${underwayLine(alert)}
    <p>${labelChips(alert.labels)}</p>
    ${facts(alert.facts, alert.details)} ${acknowledgeForm(alert, ctx)} ${remediateForm(alert, ctx)}
    ${
      delivery
        ? html`<section>
            <h2>Notifications now</h2>
            ${deliveryStateList(delivery)}
            ${
              silenceHref && !delivery.silence
                ? html`<p><a class="button" href="${silenceHref}">Silence&hellip;</a></p>`
                : delivery.silence
                  ? html`<p>
                      <a class="button" href="${consolePath('/silences', { id: delivery.silence.id })}"
                        >Silence ${delivery.silence.id}</a
                      >
                    </p>`
                  : ''
            }
          </section>`
        : ''
    }
    <section>
      <h2>Timeline</h2>
      ${timeline(store, fingerprint, query)}
    </section>
    <section>
      <h2>Remediation attempts</h2>
      ${attempts(listAttempts(store, { fingerprint }))}
    </section>
  `;
  return page({ title: alert.summary, current: '/', ctx, body });
}

/**
 * For an open alert whose record is being worked on again (a failed run retried), what it is going
 * through, in its one-line form ("retrying since 10:42, step install_modules"): the alert stays
 * open and quiet until the outcome, which it will tell.
 */
function underwayLine(alert: AlertRow): SafeHtml | '' {
  if (alert.status === 'resolved' || alert.details[UNDERWAY_SINCE] === undefined) return '';
  return html`<p class="underway">
    <strong>Under way:</strong> ${alert.brief ?? alert.summary} · no reminder while it runs; its outcome will be
    told
  </p>`;
}

function facts(shown: { label: string; value: string }[] | null, details: Record<string, string>): SafeHtml {
  const rows = shown ?? Object.entries(details).map(([label, value]) => ({ label, value }));
  if (rows.length === 0) return html``;
  return html`<dl class="facts">
    ${rows.map(
      (f) =>
        html`<dt>${f.label}</dt>
          <dd>${f.value}</dd>`,
    )}
  </dl>`;
}

/** Everything that happened to the alert, oldest first: its events, remediation audit and Slack clicks. */
function timeline(store: Store, fingerprint: string, query: URLSearchParams): SafeHtml {
  const byEvent = new Map<number, OutboxRow[]>();
  for (const n of notificationsOf(store, fingerprint)) {
    if (n.eventId !== null) byEvent.set(n.eventId, [...(byEvent.get(n.eventId) ?? []), n]);
  }
  // Each entry rendered only if its page shows it.
  const entries = [
    ...eventsOfAlert(store, fingerprint).map((e) => ({
      at: Date.parse(e.at),
      row: () => eventEntry(e, byEvent.get(e.id) ?? []),
    })),
    ...listAudit(store, { fingerprint }).map((row) => ({ at: row.at, row: () => auditEntry(row) })),
    ...listInteractions(store, { fingerprint }).map((row) => ({ at: row.at, row: () => clickEntry(row) })),
  ].sort((a, b) => a.at - b.at);
  if (entries.length === 0) return html`<p class="empty">Nothing recorded yet (a pending alert has no event).</p>`;
  // Oldest first, a page at a time; without `?from=`, the newest page.
  const shown = pager(query, entries, (e) => e.row(), {
    path: '/alert',
    keep: { fp: fingerprint },
    focus: entries.length - 1,
  });
  return html`${shown.nav}
    <ol class="timeline">
      ${shown.rows}
    </ol>`;
}

/** A click on one of the alert's Slack buttons: who, what, and what came of it (refused and stale ones too). */
function clickEntry(row: InteractionRow): SafeHtml {
  const who = row.userName ? `${row.userName} (${row.slackUser})` : row.slackUser;
  return html`<li class="interaction outcome-${row.outcome}">
    <div>
      ${time(row.at)} <strong class="kind">slack ${row.action.replace('_', ' ')}</strong> by ${who} in
      <code>${row.channel}</code>: ${row.outcome}
    </div>
    <div class="muted">${row.detail}</div>
  </li>`;
}

function eventEntry(event: AlertEvent, rows: OutboxRow[]): SafeHtml {
  return html`<li class="event event-${event.kind}">
    <div>
      ${time(Date.parse(event.at))} <strong class="kind">${event.kind}</strong> ${severityBadge(event.severity)}
      ${event.reason ? html`<span class="muted">${event.reason}</span>` : ''}
    </div>
    ${event.acknowledgement?.comment ? html`<div class="comment">&ldquo;${event.acknowledgement.comment}&rdquo;</div>` : ''}
    ${event.acknowledgementCleared ? html`<div class="muted">${clearedText(event.acknowledgementCleared)}</div>` : ''}
    ${
      rows.length === 0
        ? html`<div class="muted">
            ${isAcknowledgementKind(event.kind) ? 'to be routed at the next delivery round' : 'no channel routed'}
          </div>`
        : html`${dataTable(
            'notifications',
            ['Channel', 'Route', 'Status', 'Decision', 'Attempts', 'Sent'],
            rows.map(
              (r) =>
                html`<tr class="status-${r.status}">
                    <td>${r.channel}</td>
                    <td>${r.route}</td>
                    <td>${r.status}</td>
                    <td title="${decisionText(r)}">
                      ${r.decision}${r.detail ? html`<br /><span class="muted">${r.detail}</span>` : ''}${r.lastError ? html`<br /><span class="error">${r.lastError}</span>` : ''}
                    </td>
                    <td>${r.attempts}</td>
                    <td>${time(r.sentAt)}</td>
                  </tr>`,
            ),
          )}`
    }
  </li>`;
}

/** What an escalation or a resolve says of the acknowledgement it ended. */
function clearedText(ack: AcknowledgementNote): string {
  return `ended the acknowledgement by ${ack.by} (${ack.via}, ${formatUtc(Date.parse(ack.at))})`;
}

function auditEntry(row: AuditRow): SafeHtml {
  return html`<li class="remediation decision-${row.decision}">
    <div>
      ${time(row.at)} <strong class="kind">remediation ${row.decision}</strong> <code>${row.policy}</code> ${row.action}
      ${row.reason}
    </div>
    <div class="muted">
      ${row.key ? html`key <code>${row.key}</code>` : ''} ${row.answer ? html`answer ${row.answer}` : ''}
      ${row.outcome ? html`outcome ${row.outcome}` : ''} ${row.runId !== null ? html`run #${row.runId}` : ''}
    </div>
  </li>`;
}

function attempts(rows: AttemptRow[]): SafeHtml {
  return dataTable(
    'attempts',
    ['Planned', 'Policy', 'Action', 'Record', 'Attempt', 'Idempotency key', 'Status', 'Answer', 'Run', 'Outcome'],
    rows.map(
      (a) =>
        html`<tr>
            <td>${time(a.plannedAt)}</td>
            <td>${a.policy}</td>
            <td>${a.action}</td>
            <td>${a.recordType} #${a.recordId}</td>
            <td>${a.attempt}</td>
            <td><code>${a.key}</code></td>
            <td>${a.status}</td>
            <td>${a.answer ?? '-'}</td>
            <td>${a.runId === null ? '-' : `#${a.runId}`}</td>
            <td>
              ${a.outcome ?? '-'}${a.outcomeDetail ? html`<br /><span class="muted">${a.outcomeDetail}</span>` : ''}
            </td>
          </tr>`,
    ),
    'No remediation attempt.',
  );
}
