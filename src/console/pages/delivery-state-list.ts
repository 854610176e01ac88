/**
 * An alert's delivery state (`delivery-state.ts`) as a short list: acknowledged by whom, when and why;
 * silenced by whom until when, held by
 * which cause, why it is pending, and each channel's last decision. Shown in the alert
 * list and on an alert's page alike.
 */
import { formatUtc } from '../../lib/format-utc.js';
import { decisionText, type DeliveryState } from '../delivery-state.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { alertPath, consolePath } from '../../lib/console-paths.js';

/** The delivery state as a list; "no notification yet" when nothing was decided. */
export function deliveryStateList(delivery: DeliveryState): SafeHtml {
  const { acknowledgement, silence, inhibitedBy, pending, channels } = delivery;
  const items: HtmlValue[] = [
    acknowledgement &&
      html`<li class="why acknowledged">
        acknowledged by ${acknowledgement.by} at ${formatUtc(acknowledgement.at)} (${acknowledgement.via}${
          acknowledgement.comment ? `: ${acknowledgement.comment}` : ''
        }); repeats stop until it resolves or gets worse
      </li>`,
    silence &&
      html`<li class="why silenced">
        silenced by <a href="${consolePath('/silences', { id: silence.id })}">${silence.id}</a> until
        ${formatUtc(silence.endsAt)} (${silence.createdBy}: ${silence.reason})
      </li>`,
    inhibitedBy &&
      html`<li class="why inhibited">
        inhibited (${inhibitedBy.rule}) by <a href="${alertPath(inhibitedBy.fingerprint)}">${inhibitedBy.summary}</a>
      </li>`,
    ...(pending ?? []).map((reason) => html`<li class="why pending">pending: ${reason}</li>`),
    ...channels.map(
      (row) =>
        html`<li class="channel status-${row.status}"><strong>${row.channel}</strong>: ${decisionText(row)}</li>`,
    ),
  ];
  if (!items.some(Boolean)) items.push(html`<li class="muted">no notification yet</li>`);
  return html`<ul class="delivery-state">
    ${items}
  </ul>`;
}
