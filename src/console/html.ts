/**
 * The console's templating: a tagged template that escapes every value it is given, so text from
 * the service (app names, summaries, reasons, log lines) is always text and never markup. Only
 * what another `html` template made (or {@link safeLink} built from a checked URL) goes in as it
 * is. Attribute values in the templates are always quoted, and the escaping covers both quotes, so
 * a value cannot end its attribute either.
 *
 *   html`<td title="${alert.summary}">${alert.summary}</td>`   // both escaped
 *   html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`     // nested templates kept
 */
import { escapeHtmlLines, safeHttpUrl } from '../notify/channels/escape.js';

/** Only this module makes {@link SafeHtml}: a value cannot claim to be markup by its shape. */
const MADE_HERE = Symbol('html');

/** Markup made by {@link html}: written into a page as it is. */
export class SafeHtml {
  readonly #text: string;

  constructor(token: typeof MADE_HERE, text: string) {
    if (token !== MADE_HERE) throw new TypeError('SafeHtml is made by the html template only');
    this.#text = text;
  }

  toString(): string {
    return this.#text;
  }
}

/** What a template takes: markup, text (escaped), nothing (`null`, `undefined`, `false`), or lists of them. */
export type HtmlValue = SafeHtml | string | number | null | undefined | false | readonly HtmlValue[];

/** The tagged template: the literal parts as written, every value escaped unless it is {@link SafeHtml}. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(MADE_HERE, out);
}

/**
 * A link to a page outside the console (the platform's own page of a record): only an http(s)
 * URL without credentials (`safeHttpUrl`) becomes a link, opened in a new tab with no referrer
 * and no hold on this page; anything else (`javascript:`, `data:`) is shown as the text it is.
 */
export function safeLink(url: string | null | undefined, label: string): SafeHtml {
  const href = safeHttpUrl(url);
  if (href === null) return html`<span class="url">${url ?? ''}</span>`;
  return html`<a href="${href}" rel="noopener noreferrer nofollow" target="_blank">${label}</a>`;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.toString();
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  // Escaped for element content and quoted attribute values alike; never cut. Line breaks stay:
  // HTML folds them into spaces except where lines are lines (a textarea's matchers, a pre).
  return escapeHtmlLines(String(value), Infinity);
}
