/**
 * Message templates (`notify.channels[].template`): Mustache, a template language with no logic
 * and no code, interpreted by the `mustache` package (no template is ever turned into JavaScript).
 * What a template may do is narrowed further here, when it is compiled:
 *
 * - every value is escaped for the channel's medium by the escaper the channel gives at render
 *   time: `{{{name}}}` and `{{&name}}`, which print a value unescaped, are refused;
 * - no partials (`{{>name}}`): a template is one text, nothing is looked up by name at render time;
 * - every name must be a field of the view the template renders ({@link TEMPLATE_FIELDS}), looked
 *   up as Mustache does (the innermost section first, then outwards), so a typo is refused when
 *   the config is loaded instead of printing nothing to an on-call engineer at 3 a.m.
 *
 * The views are plain data built by `template-view.ts` (no functions, so no Mustache lambda can
 * run), and a name is looked up only where the compiler proved it is a field.
 */
import Mustache from 'mustache';

/** What a field holds: text, a number, a yes/no, a list of items, an object, or labels by any name. */
export type FieldType =
  | { type: 'text' | 'number' | 'flag'; doc: string }
  | { type: 'list'; doc: string; item: Fields | 'text' }
  | { type: 'object'; doc: string; fields: Fields }
  | { type: 'labels'; doc: string };

/** The fields of one level of a view, by name. */
export type Fields = Readonly<Record<string, FieldType>>;

const text = (doc: string): FieldType => ({ type: 'text', doc });
const flag = (doc: string): FieldType => ({ type: 'flag', doc });
const number = (doc: string): FieldType => ({ type: 'number', doc });

/** `first` and `last` on every item of a list of objects: for separators (`{{^first}}, {{/first}}`). */
const POSITION: Fields = {
  first: flag('true on the first item of its list'),
  last: flag('true on the last item of its list'),
};

/** A label and its value: a fact, a detail, a shared label. */
const LABELLED: Fields = {
  label: text('what it is ("Step", "Environment")'),
  value: text('its value; a time in UTC'),
  ...POSITION,
};

/** The fields of one alert in a message (`{{#events}}…{{/events}}`, and the whole view of an alert's `text`). */
export const EVENT_FIELDS: Fields = {
  kind: text('what happened: firing, repeat, escalated, resolved, acknowledged, unacknowledged'),
  firing: flag('true while the alert is open (every kind but resolved)'),
  resolved: flag('true when the alert is over'),
  severity: text('critical, warning or info'),
  tone: text('critical, warning, info or resolved'),
  tone_word: text('CRITICAL, WARNING, INFO or RESOLVED'),
  emoji: text('🔴, 🟠, 🔵 or ✅'),
  status: text('"CRITICAL", "WARNING · still firing", "CRITICAL · acknowledged by alice", "RESOLVED after 42m"'),
  summary: text('what is wrong; once resolved, what was ("was: …")'),
  brief: text('the one-line form: "step install: database connection refused" (the summary when the check has none)'),
  check: text('the check that found it: failed_runs, certificates, backups, …'),
  fingerprint: text("the alert's stable identity (PagerDuty's dedup_key, Opsgenie's alias)"),
  app: text('the app it is about; empty when none'),
  url: text("the app's own address (http or https only); empty when none"),
  page_url: text("the platform's page of its record (`notify.links`); empty when none"),
  page_label: text('"App page", "Run page" or "Backup page"; empty when none'),
  console_url: text('its page in the console (`server.console.public_url`); empty when that is not set'),
  since: text('since when, in UTC ("2026-11-02 11:55 UTC"); empty once resolved'),
  ago: text('how long ago it started ("2h"); empty under a minute and once resolved'),
  resolution: text('why it is over, where the source says; empty otherwise'),
  acknowledged_by: text('who acknowledged it, or gave it back; empty otherwise'),
  labels: { type: 'labels', doc: 'its labels by name: {{labels.environment_type}}, {{labels.project}}, …' },
  facts: { type: 'list', doc: "its check's facts", item: LABELLED },
  details: {
    type: 'list',
    doc: 'everything PagerDuty and Opsgenie are told of it (status, summary, check, labels, facts, context, links)',
    item: LABELLED,
  },
  ...POSITION,
};

/** The fields of a whole message: what a `title` sees, and what an alert's `text` sees around the alert. */
export const MESSAGE_FIELDS: Fields = {
  tone: text('the worst open severity, or resolved: critical, warning, info, resolved'),
  tone_word: text('CRITICAL, WARNING, INFO or RESOLVED'),
  emoji: text('🔴, 🟠, 🔵 or ✅'),
  headline: text('"2 failed runs · 1 resolved · production": the counts, the app of a one-alert message, the scope'),
  counts: text('"2 failed runs, 1 resolved"'),
  what: text('the noun of the first count: "failed runs", "certificate"'),
  about: text('the app (or server) of a one-alert message; empty otherwise'),
  scope: text('what the group has in common besides the check, comma-separated ("production")'),
  channel: text("the channel's name"),
  alert_count: number('how many alerts the message shows'),
  omitted: number('how many more the message leaves out'),
  group: { type: 'labels', doc: "the group's labels by name: {{group.check}}, {{group.environment_type}}" },
  events: { type: 'list', doc: 'the alerts of the message', item: EVENT_FIELDS },
  next_steps: { type: 'list', doc: 'what to do next, one sentence per check ({{.}})', item: 'text' },
  silence_command: text('the command that silences what the message is about; empty when none can be shown'),
  acknowledgement: text(
    '"ACKNOWLEDGED by alice" or "ACKNOWLEDGEMENT GIVEN BACK by bob" when the message says only that; empty otherwise',
  ),
};

/** The fields of a notice (a test message, the daily digest, a remediation's outcome): what a `notice_title` sees. */
export const NOTICE_FIELDS: Fields = {
  topic: text('why it exists: test, digest, remediation, inhibition, …'),
  title: text('what it says, in our words ("Daily digest", "Retry of run #5981 succeeded")'),
  severity: text('critical, warning, info, resolved or ok, where it has one; empty otherwise'),
  tone: text('its severity, or info when it has none'),
  tone_word: text('CRITICAL, WARNING, INFO, RESOLVED or OK'),
  emoji: text('🔴, 🟠, 🔵 or ✅'),
  fields: { type: 'list', doc: 'its facts', item: LABELLED },
  lines: { type: 'list', doc: 'its lines of text ({{.}})', item: 'text' },
  url: text('where to read more (http or https only); empty when none'),
  channel: text("the channel's name"),
};

/**
 * Which fields a template part sees: the message's (a title), an alert's within its message (a
 * text), or a notice's.
 */
export type TemplateScope = 'message' | 'event' | 'notice';

/** The view each scope starts with, outermost first (Mustache looks a name up from the innermost). */
export const TEMPLATE_FIELDS: Readonly<Record<TemplateScope, readonly Fields[]>> = {
  message: [MESSAGE_FIELDS],
  event: [MESSAGE_FIELDS, EVENT_FIELDS],
  notice: [NOTICE_FIELDS],
};

/** Why a template is refused: what, and where in the template (1-based line and column). */
export interface TemplateProblem {
  message: string;
  line: number;
  column: number;
}

/** Turns a value into text for one medium, escaped and cut (`escape.ts`). */
export type ValueEscaper = (value: string) => string;

/** A template that parsed and names only fields of its scope: rendered with a view and an escaper. */
export interface CompiledTemplate {
  readonly source: string;
  /**
   * The template's text with the values of `views` (outermost first: a message, then one of its
   * alerts), each escaped by `escape`; blank lines before it and whitespace after it trimmed.
   */
  render(views: readonly object[], escape: ValueEscaper): string;
  /**
   * The same template with its own text (not only the values) passed through `literal`: a template
   * written as plain text, used where the medium is markup (an email's HTML part).
   */
  withLiteral(literal: (text: string) => string): CompiledTemplate;
}

/** A Mustache token: [type, value, start, end, children?, sectionEnd?]. */
type Token = [string, string, number, number, Token[]?, number?];

/** Compiles a template for `scope`, or says why it cannot be used. */
export function compileTemplate(source: string, scope: TemplateScope): CompiledTemplate | TemplateProblem {
  // A writer of its own: its parse cache lives and dies with this template, none is shared.
  const writer = new Mustache.Writer();
  let tokens: Token[];
  try {
    tokens = writer.parse(source) as Token[];
  } catch (err) {
    return parseProblem(source, err);
  }
  const problem = checkTokens(tokens, TEMPLATE_FIELDS[scope], source);
  if (problem) return problem;
  return compiled(source, tokens, writer);
}

function compiled(source: string, tokens: Token[], writer: Mustache.Writer): CompiledTemplate {
  return {
    source,
    render(views, escape) {
      let context: Mustache.Context | undefined;
      for (const view of views) context = new Mustache.Context(view, context);
      const out = writer.renderTokens(
        tokens as unknown as string[][],
        context ?? new Mustache.Context({}),
        undefined,
        source,
        {
          // Mustache hands over numbers and booleans as they are.
          escape: (value: unknown) => escape(String(value)),
        },
      );
      return out.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
    },
    withLiteral(literal) {
      const map = (list: Token[]): Token[] =>
        list.map((t) => {
          if (t[0] === 'text') return [t[0], literal(t[1]), t[2], t[3]];
          return t[4] ? [t[0], t[1], t[2], t[3], map(t[4]), t[5]] : t;
        });
      return compiled(source, map(tokens), writer);
    },
  };
}

/** A bare value on the lookup stack (an item of a list of text, a section's text): only `{{.}}` reads it. */
const VALUE = { type: 'value' } as const;

/** A level of the lookup stack while checking: the fields there, or a bare value. */
type Level = Fields | typeof VALUE;

/** Walks the tokens with Mustache's lookup rules; the first problem found. */
function checkTokens(tokens: readonly Token[], stack: readonly Level[], source: string): TemplateProblem | null {
  for (const t of tokens) {
    const [type, name, start] = t;
    const at = (message: string) => ({ message, ...position(source, start) });
    switch (type) {
      case 'text':
      case '!':
      case '=':
        continue;
      case '&':
        return at(`{{{${name}}}} and {{&${name}}} print a value unescaped, which is refused: write {{${name}}}`);
      case '>':
        return at(`partials ({{>${name}}}) are not supported: a template is one text`);
      case 'name': {
        const field = resolve(name, stack);
        if ('unknown' in field) return at(field.unknown);
        if (field !== VALUE && (field.type === 'list' || field.type === 'object' || field.type === 'labels'))
          return at(
            `"${name}" is a ${field.type === 'list' ? 'list' : 'group of fields'}: open it with {{#${name}}}…{{/${name}}}`,
          );
        continue;
      }
      case '#':
      case '^': {
        const field = resolve(name, stack);
        if ('unknown' in field) return at(field.unknown);
        let inner: Level | null = null;
        if (type === '#' && field !== VALUE) {
          if (field.type === 'list') inner = field.item === 'text' ? VALUE : field.item;
          else if (field.type === 'object') inner = field.fields;
          else if (field.type === 'labels') return at(`"${name}" holds labels by name: use {{${name}.<label>}}`);
          // Mustache pushes text and numbers as the section's `.`; a yes/no pushes nothing.
          else if (field.type !== 'flag') inner = VALUE;
        }
        const problem = checkTokens(t[4] ?? [], inner === null ? stack : [...stack, inner], source);
        if (problem) return problem;
        continue;
      }
      default:
        return at(`unknown tag {{${type}${name}}}`);
    }
  }
  return null;
}

/** What a name refers to from the stack: its field, the bare value for `.`, or why it is unknown. */
function resolve(name: string, stack: readonly Level[]): FieldType | typeof VALUE | { unknown: string } {
  if (name === '.') {
    return stack[stack.length - 1] === VALUE
      ? VALUE
      : { unknown: '{{.}} is only for an item of a list of text, such as next_steps' };
  }
  const [head, ...rest] = name.split('.');
  for (let i = stack.length - 1; i >= 0; i--) {
    const level = stack[i]!;
    if (level === VALUE || !Object.hasOwn(level, head!)) continue;
    let field = (level as Fields)[head!]!;
    for (const [k, part] of rest.entries()) {
      if (field.type === 'labels' && k === rest.length - 1 && /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(part))
        return { type: 'text', doc: '' };
      if (field.type !== 'object' || !Object.hasOwn(field.fields, part)) return unknown(name, part);
      field = field.fields[part]!;
    }
    return field;
  }
  return unknown(name, head!);
}

function unknown(name: string, part: string): { unknown: string } {
  return { unknown: name === part ? `unknown field "${name}"` : `unknown field "${name}" (no "${part}" there)` };
}

/** 1-based line and column of an offset in the template. */
function position(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/** Mustache's parse errors say `… at <offset>`: the same words, the offset as line and column. */
function parseProblem(source: string, err: unknown): TemplateProblem {
  const message = err instanceof Error ? err.message : String(err);
  const m = / at (\d+)$/.exec(message);
  const offset = m ? Number(m[1]) : source.length;
  const words = (m ? message.slice(0, m.index) : message).replace(/^Unclosed tag$/, 'unclosed tag (no }})');
  return { message: `does not parse: ${words.charAt(0).toLowerCase()}${words.slice(1)}`, ...position(source, offset) };
}

/** Whether a compile answered a problem. */
export function isTemplateProblem(t: CompiledTemplate | TemplateProblem): t is TemplateProblem {
  return 'message' in t;
}
