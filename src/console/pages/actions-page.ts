/**
 * `/actions`: the remediation audit, newest first: every decision (acted, skipped and why, dry
 * run), every answer of the service and every outcome, with its policy, record, environment,
 * idempotency key and run. The same rows as `deploy-watchdog actions`, optionally one policy's, a
 * page at a time (`pager.ts`), each page read from the store alone.
 */
import { countAudit, listAudit, type AuditRow } from '../../remediation/remediation-store.js';
import { html, type SafeHtml } from '../html.js';
import { dataTable, page, time, type PageContext } from '../layout.js';
import { alertPath } from '../../lib/console-paths.js';
import { pager } from '../pager.js';

const HEADINGS = ['Time', 'Policy', 'Action', 'Record', 'Env', 'Decision', 'Reason', 'Answer', 'Outcome', 'Key', 'Run'];

/** The audit page. */
export function actionsPage(ctx: PageContext, query: URLSearchParams): SafeHtml {
  const { store } = ctx;
  const policy = query.get('policy')?.trim() || undefined;
  const filter = policy === undefined ? {} : { policy };
  const shown = pager(
    query,
    {
      total: countAudit(store, filter),
      read: (offset, limit) => listAudit(store, { limit, offset, ...filter }).reverse(),
    },
    auditRow,
    { path: '/actions', keep: filter },
  );
  const body = html` <div class="title-row">
      <h1>Remediation audit</h1>
      <p class="counts">
        newest first${policy ? html` of policy <code>${policy}</code> · <a href="/actions">every policy</a>` : ''}
      </p>
      <form method="get" action="/actions" class="inline">
        <label>Policy <input name="policy" value="${policy ?? ''}" size="16" /></label> <button>Show</button>
      </form>
    </div>
    ${shown.nav}${dataTable('audit', HEADINGS, shown.rows, 'No remediation decision recorded.')}`;
  return page({ title: 'Remediation', current: '/actions', ctx, body });
}

function auditRow(r: AuditRow): SafeHtml {
  return html`<tr class="decision-${r.decision}">
    <td>${time(r.at)}</td>
    <td>${r.policy}</td>
    <td>${r.action}</td>
    <td>
      ${r.recordType === null ? '-' : r.fingerprint ? html`<a href="${alertPath(r.fingerprint)}">${r.recordType} #${r.recordId}</a>` : `${r.recordType} #${r.recordId}`}
    </td>
    <td>${r.environment ?? '-'}</td>
    <td>${r.decision}</td>
    <td>${r.reason}${r.detail ? html`<br /><span class="muted">${r.detail}</span>` : ''}</td>
    <td>${r.answer ?? '-'}</td>
    <td>${r.outcome ?? '-'}</td>
    <td>${r.key ? html`<code>${r.key}</code>` : '-'}</td>
    <td>${r.runId === null ? '-' : `#${r.runId}`}</td>
  </tr>`;
}
