/**
 * The console's two writes: making a silence from a previewed form, and ending one. Each is
 * recorded with who (the signed-in user, or `console@loopback`) and why (the required comment):
 * in the silence itself (`created_by` and `reason`; `expired_by` and `expire_reason`) and in the
 * daemon's log. A refused form is answered with the page again and what was wrong; nothing is
 * written then.
 */
import { MatcherError } from '../alerts/matchers.js';
import { createSilence, describeMatchers, expireSilence, SilenceError } from '../alerts/silences.js';
import type { Logger } from '../lib/logger.js';
import type { SafeHtml } from './html.js';
import type { PageContext } from './layout.js';
import { consolePath } from '../lib/console-paths.js';
import { checkDraft, draftFrom, newSilencePage } from './pages/new-silence-page.js';
import { silencesPage } from './pages/silences-page.js';

/** What a form comes to: a page to go to (303), or a page to show again with a status. */
export type FormOutcome = { redirect: string } | { status: number; body: SafeHtml };

/** What the console's forms need. */
export interface FormDeps {
  logger: Logger;
  /** Tells the delivery loop there is something to route now (the channels that show acknowledgements). */
  wake?: (() => void) | undefined;
}

/** `POST /silences`: a preview (intent=preview), or a silence made from the previewed form. */
export function submitSilence(deps: FormDeps, ctx: PageContext, fields: URLSearchParams): FormOutcome {
  const draft = draftFrom(fields);
  const again = (status: number, message?: string): FormOutcome => ({
    status,
    body: newSilencePage(ctx, draft, { preview: true, message }),
  });
  if (fields.get('intent') !== 'create') return again(200);
  const checked = checkDraft(draft, ctx.config.server.console.max_silence);
  if (checked.problems.length > 0) return again(400, 'The silence was not created: see the problems below.');
  if (checked.matchersText !== draft.previewed.trim()) {
    return again(409, 'The matchers changed since the preview: check what they cover now, then create the silence.');
  }
  if (draft.comment.trim() === '') return again(400, 'The silence was not created: say why in the comment.');
  try {
    const silence = createSilence(ctx.store, { ...checked, reason: draft.comment, createdBy: ctx.who, now: ctx.now });
    deps.logger.info(
      { silence: silence.id, matchers: describeMatchers(silence.matchers), by: ctx.who, reason: silence.reason },
      'silence created in the console',
    );
    return { redirect: consolePath('/silences', { created: silence.id }) };
  } catch (err) {
    if (err instanceof SilenceError || err instanceof MatcherError) return again(400, err.message);
    throw err;
  }
}

/** `POST /silences/expire`: ends a silence now, with who and why recorded. */
export function endSilence(deps: FormDeps, ctx: PageContext, fields: URLSearchParams): FormOutcome {
  const id = (fields.get('id') ?? '').trim();
  const comment = (fields.get('comment') ?? '').trim();
  // The list in force again, saying why nothing was ended.
  const again = (status: number, problem: string): FormOutcome => ({
    status,
    body: silencesPage(ctx, new URLSearchParams(), problem),
  });
  if (comment === '') return again(400, `Silence ${id} was not ended: say why in the comment.`);
  const result = expireSilence(ctx.store, id, ctx.now, { by: ctx.who, reason: comment });
  switch (result.outcome) {
    case 'unknown-id':
      return again(404, `There is no silence ${id}.`);
    case 'already-over':
      return again(409, `Silence ${id} was already over.`);
    case 'expired':
      deps.logger.info(
        { silence: id, matchers: describeMatchers(result.silence.matchers), by: ctx.who, reason: comment },
        'silence ended in the console',
      );
      return { redirect: consolePath('/silences', { expired: id }) };
  }
}
