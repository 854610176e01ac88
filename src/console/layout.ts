/**
 * The console's page shell and the small pieces every page shows the same way: a severity, an
 * age, a time, a set of labels, a link to a page of the console. Pages are plain server-rendered
 * HTML: every link and form works without JavaScript; the one script only submits a select when
 * it changes.
 */
import type { Config } from '../config/load-config.js';
import type { Labels, Severity } from '../lib/alert-vocabulary.js';
import type { Store } from '../state/store.js';
import { formatDuration } from '../lib/format-duration.js';
import { formatUtc } from '../lib/format-utc.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';

/** What every page knows about the request it answers. */
export interface PageContext {
  /** The state the console reads, and the configuration in force when the request came. */
  store: Store;
  config: Config;
  /** Who is signed in, as the audit records them. */
  who: string;
  /** The CSRF token of this visitor's forms. */
  csrf: string;
  now: number;
  /** True when the visitor signed in with the token at the login page (a sign-out button is shown). */
  session: boolean;
  /**
   * What this visitor may ask a remediation policy to do about an alert now, as its button says it
   * ("Restart app"); undefined: nothing (no policy covers it, or `allow.remediate` does not name them).
   */
  remedyOf?: (fingerprint: string) => string | undefined;
}

/** The pages of the navigation bar. */
const NAV: readonly [path: string, label: string][] = [
  ['/', 'Alerts'],
  ['/silences', 'Silences'],
  ['/actions', 'Remediation'],
  ['/sources', 'Sources'],
  ['/config', 'Config'],
];

/** A whole page: head, navigation (`current` marked), the body, and the footer. */
export function page(options: {
  title: string;
  current: string;
  ctx: PageContext | undefined;
  body: HtmlValue;
}): SafeHtml {
  const { title, current, ctx, body } = options;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${title} · deploy-watchdog</title>
        <link rel="stylesheet" href="/static/console.css" />
        <script src="/static/console.js" defer></script>
      </head>
      <body>
        <header>
          <a class="brand" href="/">deploy-watchdog</a>
          <nav>
            ${NAV.map(
              ([path, label]) =>
                html`<a href="${path}" ${path === current ? html` aria-current="page"` : ''}>${label}</a>`,
            )}
          </nav>
          ${ctx ? whoAmI(ctx) : ''}
        </header>
        <main>${body}</main>
        <footer>${ctx ? html`Times in UTC · now ${formatUtc(ctx.now)}` : ''}</footer>
      </body>
    </html> `;
}

function whoAmI(ctx: PageContext): SafeHtml {
  return html`<div class="who">
    ${ctx.who}${
      ctx.session
        ? html` <form method="post" action="/logout" class="inline">
            ${csrfField(ctx)}<button class="link">Sign out</button>
          </form>`
        : ''
    }
  </div>`;
}

/** The hidden field every form that writes carries. */
export function csrfField(ctx: PageContext): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${ctx.csrf}" />`;
}

/** A severity as a coloured word. */
export function severityBadge(severity: Severity): SafeHtml {
  return html`<span class="sev sev-${severity}">${severity}</span>`;
}

/** How long ago, with the exact time on hover: "3h 12m" (title "2026-11-01 12:00 UTC"). */
export function age(at: number, now: number): SafeHtml {
  return html`<time datetime="${new Date(at).toISOString()}" title="${formatUtc(at)}"
    >${formatDuration(now - at)}</time
  >`;
}

/** A time in UTC, to the second. */
export function time(at: number | null): SafeHtml {
  if (at === null) return html`<span class="muted">-</span>`;
  return html`<time datetime="${new Date(at).toISOString()}">${formatUtc(at, 'iso')}</time>`;
}

/** Labels as chips, `name=value`, leaving out the ones named in `skip`. */
export function labelChips(labels: Labels, skip: readonly string[] = []): SafeHtml {
  const shown = Object.entries(labels).filter(([k, v]) => v !== undefined && v !== '' && !skip.includes(k));
  return html`<span class="labels">${shown.map(([k, v]) => html`<span class="label">${k}=${v ?? ''}</span>`)}</span>`;
}

/** A notice at the top of a page: what just happened, or what went wrong. */
export function notice(kind: 'ok' | 'error' | 'warn', text: HtmlValue): SafeHtml {
  return html`<p class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}

/**
 * A table: its class, its column headings, and its rows (each a `<tr>`); a list with no row, when
 * `empty` says what to say then, is that line instead of an empty table.
 */
export function dataTable(className: string, headings: readonly string[], rows: HtmlValue[], empty?: string): SafeHtml {
  if (rows.length === 0 && empty !== undefined) return html`<p class="empty">${empty}</p>`;
  return html`<table class="${className}">
<thead><tr>${headings.map((h) => html`<th>${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/** A page that only says something: the console off, a page not found, a refusal. */
export function messagePage(title: string, message: string): SafeHtml {
  return page({
    title,
    current: '',
    ctx: undefined,
    body: html`<h1>${title}</h1>
      ${notice('error', message)}`,
  });
}
