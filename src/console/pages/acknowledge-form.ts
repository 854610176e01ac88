/**
 * The form that acknowledges a firing alert, or gives its acknowledgement back: on the alert's page
 * with an optional comment (why), in the alert list as one button that comes back to the list.
 * Nothing for an alert that is not firing: there is nothing to take.
 */
import type { AlertRow } from '../../alerts/alert-store.js';
import { html, type SafeHtml } from '../html.js';
import { csrfField, type PageContext } from '../layout.js';

/** The parameters of the alert list's page a click there comes back to (`LIST_VIEW`). */
export type ListView = Partial<Record<(typeof LIST_VIEW)[number], string>>;

/** What the list shows (its search, filter, order, grouping and page), carried by its forms to come back to it. */
export const LIST_VIEW = ['q', 'show', 'sort', 'group', 'from', 'size'] as const;

/**
 * The form of a firing alert as the alert's page shows it; given `list` (the view of the alert list
 * a click there comes back to), as the list shows it.
 */
export function acknowledgeForm(alert: AlertRow, ctx: PageContext, list?: ListView): SafeHtml {
  if (alert.status !== 'firing') return html``;
  const taken = alert.acknowledgement !== null;
  const fields = html`${csrfField(ctx)}<input type="hidden" name="fp" value="${alert.fingerprint}" />`;
  const action = taken ? '/alerts/unacknowledge' : '/alerts/acknowledge';
  const label = taken ? 'Unacknowledge' : 'Acknowledge';
  if (list) {
    return html`<form method="post" action="${action}" class="list-ack">
      ${fields}<input type="hidden" name="back" value="list" />${LIST_VIEW.map((name) =>
        list[name] === undefined ? '' : html`<input type="hidden" name="${name}" value="${list[name]}" />`,
      )}<button>${label}</button>
    </form>`;
  }
  return html`<form method="post" action="${action}" class="acknowledge">
    ${fields}
    <label
      >Comment (optional)
      <input
        name="comment"
        maxlength="1000"
        placeholder="${taken ? 'why you give it back' : 'what you are doing about it'}"
    /></label>
    <button class="${taken ? '' : 'primary'}">${label}</button>
  </form>`;
}
