/**
 * `/silences/new`: a silence is made from a preview. The form takes matchers (one per line, as
 * `deploy-watchdog silence --match` reads them), a start (empty: now; later: a maintenance window
 * planned ahead), a duration (at most `server.console.max_silence`) and a required comment. "Preview" lists the open alerts the matchers cover now; "Create silence"
 * appears with the preview and is refused if the matchers changed since, so nothing is saved that
 * was not previewed. Both buttons POST (the CSRF token stays out of URLs); the alert page's
 * "Silence…" link opens the form filled in and previewed (GET).
 */
import { parseMatcher, formatMatcher, type LabelMatcher } from '../../alerts/matchers.js';
import { alertsMatching } from '../../alerts/silence-listing.js';
import { parseDuration } from '../../config/duration.js';
import { formatDuration } from '../../lib/format-duration.js';
import { html, whole, type SafeHtml } from '../html.js';
import { csrfField, labelChips, notice, page, severityBadge, time, type PageContext } from '../layout.js';
import { alertPath } from '../../lib/console-paths.js';
import { parseTime } from '../../lib/parse-time.js';

/** The form as sent (or as the link filled it in). */
export interface SilenceDraft {
  matchers: string;
  /** When it starts, in UTC (a browser's `datetime-local`, or ISO 8601 with a zone); empty: now. */
  starts: string;
  duration: string;
  comment: string;
  /** The matchers of the preview the visitor saw, as {@link checkDraft} writes them. */
  previewed: string;
}

/** A draft read: what it asks for, and every problem with it. */
export interface CheckedDraft {
  matchers: LabelMatcher[];
  /**
   * The matchers as `formatMatcher` writes them, as a JSON list: what a preview showed, in one line
   * (a hidden field's value loses its line breaks).
   */
  matchersText: string;
  /** When it starts (ms); undefined: now. */
  startsAt: number | undefined;
  durationMs: number;
  problems: string[];
}

/** The default duration offered. */
const DEFAULT_DURATION = '2h';

/** Reads a draft from form fields or a query. */
export function draftFrom(fields: URLSearchParams): SilenceDraft {
  return {
    matchers: fields.get('matchers') ?? '',
    starts: fields.get('starts') ?? '',
    duration: fields.get('duration') ?? DEFAULT_DURATION,
    comment: fields.get('comment') ?? '',
    previewed: fields.get('previewed') ?? '',
  };
}

/** Parses a draft's matchers and duration against the longest silence allowed. */
export function checkDraft(draft: SilenceDraft, maxMs: number): CheckedDraft {
  const problems: string[] = [];
  const matchers: LabelMatcher[] = [];
  for (const line of draft.matchers.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    try {
      matchers.push(parseMatcher(line));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (matchers.length === 0 && problems.length === 0) {
    problems.push('give at least one matcher (a silence of everything would hide every alert)');
  }
  let durationMs = 0;
  try {
    durationMs = parseDuration(draft.duration);
    if (durationMs <= 0) problems.push('the duration must be more than zero');
    if (durationMs > maxMs) {
      problems.push(`the duration must be at most ${formatDuration(maxMs, 'exact')} (server.console.max_silence)`);
    }
  } catch (err) {
    problems.push(`duration: ${(err as Error).message}`);
  }
  const starts = draft.starts.trim();
  let startsAt: number | undefined;
  if (starts !== '') {
    // The form says UTC: a time without a zone (what a datetime-local field sends) is read as UTC.
    startsAt = parseTime(starts) ?? parseTime(`${starts}Z`) ?? undefined;
    if (startsAt === undefined) problems.push(`start: ${JSON.stringify(starts)} is not a time (e.g. 2026-11-28T02:00)`);
  }
  return { matchers, matchersText: JSON.stringify(matchers.map(formatMatcher)), startsAt, durationMs, problems };
}

/**
 * The form, and under it the preview of what the draft's matchers cover when `preview` is set.
 * `message` is said on top (why a create was refused).
 */
export function newSilencePage(
  ctx: PageContext,
  draft: SilenceDraft,
  options: { preview: boolean; message?: string | undefined },
): SafeHtml {
  const max = ctx.config.server.console.max_silence;
  const checked = options.preview ? checkDraft(draft, max) : undefined;
  const ready = checked !== undefined && checked.problems.length === 0;
  const covered = ready ? alertsMatching(ctx.store, checked.matchers) : [];
  const body = html` <p class="crumbs"><a href="/silences">Silences</a> &rsaquo;</p>
    <h1>New silence</h1>
    ${options.message ? notice('error', options.message) : ''}
    <form method="post" action="/silences" class="silence-form">
      ${csrfField(ctx)}
      <input type="hidden" name="previewed" value="${ready ? whole(checked.matchersText) : ''}" />
      <label
        >Matchers <span class="hint">one per line: label=value, label!=value, label=~regex, label!~regex</span>
        <textarea name="matchers" rows="4" required spellcheck="false">${whole(draft.matchers)}</textarea>
      </label>
      <label
        >Starts <span class="hint">UTC; empty: now. A maintenance window planned ahead mutes nothing before its start</span>
        <input type="datetime-local" name="starts" value="${draft.starts}"
      /></label>
      <label
        >Duration <span class="hint">e.g. 30m, 2h, 1d; at most ${formatDuration(max, 'exact')}</span>
        <input name="duration" value="${draft.duration}" required
      /></label>
      <label
        >Comment <span class="hint">why: required, kept with the silence</span>
        <textarea name="comment" rows="2" required>${draft.comment}</textarea>
      </label>
      <div class="buttons">
        <button name="intent" value="preview" formnovalidate>Preview</button>
        ${ready ? html`<button name="intent" value="create" class="primary">Create silence</button>` : ''}
      </div>
    </form>
    ${checked ? preview(checked, covered, ctx) : ''}`;
  return page({ title: 'New silence', current: '/silences', ctx, body });
}

/** The covered alerts a preview names, most important first; the rest are counted. */
const PREVIEW_SHOWN = 100;

function preview(checked: CheckedDraft, covered: ReturnType<typeof alertsMatching>, ctx: PageContext): SafeHtml {
  if (checked.problems.length > 0) {
    return html`<section class="preview">
      <h2>Preview</h2>
      <ul class="problems">
        ${checked.problems.map((p) => html`<li>${p}</li>`)}
      </ul>
    </section>`;
  }
  const later = checked.startsAt !== undefined && checked.startsAt > ctx.now;
  return html`<section class="preview" data-covered="${covered.length}">
    <h2>Preview</h2>
    <p>
      ${
        later
          ? html`Scheduled: from ${time(checked.startsAt!)} for ${formatDuration(checked.durationMs, 'exact')} (it mutes
              nothing before then), these matchers cover`
          : html`For ${formatDuration(checked.durationMs, 'exact')} from now, these matchers cover`
      }
      <strong>${covered.length}</strong> open ${covered.length === 1 ? 'alert' : 'alerts'} now:
    </p>
    ${
      covered.length === 0
        ? notice(
            'warn',
            'No open alert matches: check the label names and values (a silence for an alert yet to come is fine).',
          )
        : html`<ul class="covered">
            ${covered.slice(0, PREVIEW_SHOWN).map(
              (a) =>
                html`<li data-fingerprint="${a.fingerprint}">
                  ${severityBadge(a.severity)}
                  <a href="${alertPath(a.fingerprint)}">${a.summary}</a> ${labelChips(a.labels, ['check'])}
                </li>`,
            )}
            ${covered.length > PREVIEW_SHOWN ? html`<li class="muted">and ${covered.length - PREVIEW_SHOWN} more</li>` : ''}
          </ul>`
    }
    <p class="hint">Signed in as ${ctx.who}: the silence is recorded with that name and the comment.</p>
  </section>`;
}
