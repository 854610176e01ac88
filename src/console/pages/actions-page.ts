/**
 * `/actions`: the remediation audit, newest first: every decision (acted, skipped and why, dry
 * run), every answer of the service and every outcome, with its policy, record, environment,
 * idempotency key and run. The same rows as `deploy-watchdog actions`, optionally one policy's.
 */
import { listAudit } from '../../remediation/remediation-store.js';
import type { Store } from '../../state/store.js';
import { html, type SafeHtml } from '../html.js';
import { alertPath, page, time, type PageContext, dataTable } from '../layout.js';

/** How many rows the page shows, as `actions` does by default. */
const LIMIT = 200;

/** The audit page. */
export function actionsPage(store: Store, ctx: PageContext, query: URLSearchParams): SafeHtml {
  const policy = query.get('policy')?.trim() || undefined;
  const rows = listAudit(store, { limit: LIMIT, ...(policy === undefined ? {} : { policy }) }).reverse();
  const body = html` <div class="title-row">
      <h1>Remediation audit</h1>
      <p class="counts">
        newest ${LIMIT}
        rows${policy ? html` of policy <code>${policy}</code> · <a href="/actions">every policy</a>` : ''}
      </p>
      <form method="get" action="/actions" class="inline">
        <label>Policy <input name="policy" value="${policy ?? ''}" size="16" /></label> <button>Show</button>
      </form>
    </div>
    ${
      rows.length === 0
        ? html`<p class="empty">No remediation decision recorded.</p>`
        : html`${dataTable(
            'audit',
            ['Time', 'Policy', 'Action', 'Record', 'Env', 'Decision', 'Reason', 'Answer', 'Outcome', 'Key', 'Run'],
            rows.map(
              (r) =>
                html`<tr class="decision-${r.decision}">
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
                  </tr>`,
            ),
          )}`
    }`;
  return page({ title: 'Remediation', current: '/actions', ctx, body });
}
