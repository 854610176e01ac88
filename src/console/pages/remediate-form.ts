/**
 * The button of the action a remediation policy takes on an alert when a person asks (Retry now,
 * Restart app, Back up now, Leave maintenance), on the alert's page: shown only for a firing alert
 * a policy covers, to a visitor `server.console.allow.remediate` names (`PageContext.remedyOf`).
 */
import type { AlertRow } from '../../alerts/alert-store.js';
import { html, type SafeHtml } from '../html.js';
import { csrfField, type PageContext } from '../layout.js';

/** The form of a firing alert's remediation, or nothing. */
export function remediateForm(alert: AlertRow, ctx: PageContext): SafeHtml {
  const label = alert.status === 'firing' ? ctx.remedyOf?.(alert.fingerprint) : undefined;
  if (label === undefined) return html``;
  return html`<form method="post" action="/alerts/remediate" class="remediate">
    ${csrfField(ctx)}<input type="hidden" name="fp" value="${alert.fingerprint}" />
    <button>${label}</button>
  </form>`;
}
