/**
 * The console's acknowledgement forms: taking an alert (`POST /alerts/acknowledge`) and giving it
 * back (`POST /alerts/unacknowledge`), from the alert's page or the alert list. Checked for CSRF and
 * origin like every form, before they get here; recorded with who (the signed-in user) and why
 * (the optional comment) in the alert and the event of its timeline (`acknowledge.ts`) and in the
 * daemon's log. A click the alert has gone past (resolved, taken by someone else meanwhile) is
 * answered with the alert's page and what happened instead, and changes nothing.
 */
import {
  acknowledge,
  AcknowledgeError,
  acknowledgeText,
  unacknowledge,
  type AcknowledgeOutcome,
  type UnacknowledgeOutcome,
} from '../alerts/acknowledge.js';
import { messagePage, type PageContext } from './layout.js';
import { consolePath } from '../lib/console-paths.js';
import { alertPage, type PageNotice } from './pages/alert-page.js';
import { LIST_VIEW, type ListView } from './pages/acknowledge-form.js';
import type { FormDeps, FormOutcome } from './silence-actions.js';

/**
 * `POST /alerts/acknowledge` and `/alerts/unacknowledge`: `fp`, an optional `comment`, `back` (`list`,
 * with the list's view to come back to, or the alert).
 */
export function submitAcknowledgement(
  deps: FormDeps,
  ctx: PageContext,
  fields: URLSearchParams,
  /** Which of the two forms. */
  action: 'acknowledge' | 'unacknowledge',
): FormOutcome {
  const { store } = ctx;
  const fingerprint = fields.get('fp') ?? '';
  const request = {
    fingerprint,
    by: ctx.who,
    via: 'console' as const,
    comment: fields.get('comment') ?? '',
    now: ctx.now,
  };
  let result: AcknowledgeOutcome | UnacknowledgeOutcome;
  try {
    result = action === 'acknowledge' ? acknowledge(store, request) : unacknowledge(store, request);
  } catch (err) {
    if (err instanceof AcknowledgeError)
      return alertPageAgain(ctx, fingerprint, 400, { kind: 'error', text: `Nothing changed: ${err.message}.` });
    throw err;
  }
  const text = acknowledgeText(result);
  switch (result.outcome) {
    case 'acknowledged':
    case 'unacknowledged': {
      deps.logger.info(
        { fingerprint, by: ctx.who, comment: result.event.acknowledgement?.comment, event: result.event.id },
        action === 'acknowledge'
          ? 'alert acknowledged in the console'
          : 'alert acknowledgement given back in the console',
      );
      deps.wake?.();
      const done = result.outcome;
      return {
        redirect:
          fields.get('back') === 'list'
            ? consolePath('/', { ...listView(fields), done, fp: fingerprint })
            : consolePath('/alert', { fp: fingerprint, done }),
      };
    }
    case 'not_found':
      return { status: 404, body: messagePage('Not found', text) };
    // Someone or something was quicker: said, not an error.
    case 'already_acknowledged':
    case 'not_acknowledged':
    case 'not_firing':
      return alertPageAgain(ctx, fingerprint, 409, { kind: 'warn', text });
  }
}

/** The list's search, grouping and page a form from the list carried. */
function listView(fields: URLSearchParams): ListView {
  return Object.fromEntries(LIST_VIEW.map((name) => [name, fields.get(name) ?? undefined]));
}

/** The alert's page again with what was said, or a 404 saying it when there is no such alert (any more). */
export function alertPageAgain(ctx: PageContext, fingerprint: string, status: number, said: PageNotice): FormOutcome {
  const body = alertPage(ctx, fingerprint, said);
  return body ? { status, body } : { status: 404, body: messagePage('Not found', said.text) };
}
