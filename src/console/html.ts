/**
 * The console's templating: a tagged template that escapes every value it is given, so text from
 * the service (app names, summaries, reasons, log lines) is always text and never markup. Only
 * what another `html` template made (or {@link safeLink} built from a checked URL) goes in as it
 * is. Attribute values in the templates are always quoted, and the escaping covers both quotes, so
 * a value cannot end its attribute either. Each value is cut at {@link VALUE_MAX} characters
 * (marked with an ellipsis), so a record with megabytes of text makes a page of kilobytes; our own
 * text that must come back whole (the config, a form's matchers) goes in through {@link whole}.
 *
 *   html`<td title="${alert.summary}">${alert.summary}</td>`   // both escaped
 *   html`<ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`     // nested templates kept
 */
import { escapeHtmlLines, safeHttpUrl } from '../notify/channels/escape.js';

/**
 * The most a value from a record adds to a page, in escaped characters: longer than anything a
 * person reads in a cell (a channel cuts a summary at 4,000), short enough that a list page of a
 * few hundred rows stays a few megabytes at worst whatever the service sent.
 */
export const VALUE_MAX = 8_000;

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

/**
 * Text escaped but never cut: for our own text whose size we bound elsewhere and that must come
 * back whole (the config in force, a form's matchers travelling to the next request).
 */
export function whole(text: string): SafeHtml {
  return new SafeHtml(MADE_HERE, escapeHtmlLines(text, Infinity));
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.toString();
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  // Escaped for element content and quoted attribute values alike, and cut. Line breaks stay:
  // HTML folds them into spaces except where lines are lines (a textarea's matchers, a pre).
  return escapeHtmlLines(String(value), VALUE_MAX);
}
