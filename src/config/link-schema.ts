/**
 * Links a message carries, as the config writes them: runbooks (`checks.<name>.runbook_url`,
 * `notify.routes[].runbook_url`) and the platform's own pages (`notify.links`), each an http(s)
 * address checked at load, so a message never carries a link that cannot open.
 */
import { z } from 'zod';

/** What a page template fills with the record's id. */
export const ID_PLACEHOLDER = '{id}';

/** An http(s) URL without credentials in it (a message shows it to every reader), or the reason it is not. */
function urlProblem(text: string): string | null {
  if (!URL.canParse(text)) return 'must be an http(s) URL such as https://wiki.example.com/runbooks/failed-runs';
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not hold a user name or password (every reader of a message sees it)';
  return null;
}

/** A string `problemOf` finds nothing wrong with; what it finds is the problem, at the string. */
const checkedString = (problemOf: (text: string) => string | null) =>
  z.string().superRefine((text, ctx) => {
    const problem = problemOf(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** A runbook's address: an http(s) URL. */
export const runbookUrlSchema = checkedString(urlProblem).describe(
  'Where the reader of these alerts finds what to do: an http(s) URL, shown as a link in Slack and email.',
);

/**
 * A page of the platform with `{id}` where the record's id goes: an http(s) URL once filled, and no
 * other placeholder (a `{name}` would be left in the link as written).
 */
export const pageTemplateSchema = checkedString((text) => {
  if (!text.includes(ID_PLACEHOLDER)) return `must hold ${ID_PLACEHOLDER}, where the record's id goes`;
  const other = /\{[^}]*\}/.exec(text.replaceAll(ID_PLACEHOLDER, ''));
  if (other) return `holds ${other[0]}: ${ID_PLACEHOLDER} is the only placeholder`;
  return urlProblem(fillPage(text, 1));
});

/**
 * A page template filled with a record's id, URL-encoded (an id is a number in the reference; one
 * that is not can still never add a path, a query or a fragment to the link).
 */
export function fillPage(template: string, id: string | number): string {
  return template.replaceAll(ID_PLACEHOLDER, encodeURIComponent(String(id)));
}
