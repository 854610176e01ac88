/**
 * A channel's `template` in the config, its default templates (the files in `templates/`, which
 * the built-in rendering uses, so a copy of one is where a custom template starts), and the check
 * at load (`validate`, start, SIGHUP) that refuses a template that does not parse or names an
 * unknown field, naming the channel and the position.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { unreadableText } from '../../config/config-error.js';
import type { KeyPathProblem } from '../../config/yaml-lines.js';
import {
  compileTemplate,
  isTemplateProblem,
  type CompiledTemplate,
  type TemplateProblem,
  type TemplateScope,
} from './message-template.js';

/** The parts of a message a template can shape. */
export type TemplatePart = 'title' | 'text' | 'html' | 'notice_title';

/** The parts a channel kind takes, each with the view it renders. */
export type TemplateParts = Readonly<Partial<Record<TemplatePart, TemplateScope>>>;

/** Longest template accepted (characters): a message, not a program. */
const MAX_TEMPLATE = 20_000;

const PART_DOCS: Readonly<Record<TemplatePart, string>> = {
  title: "the message's title",
  text: 'what is said of each alert',
  html: "what is said of each alert in the email's HTML part",
  notice_title: "a notice's title (a test message, the daily digest, a remediation's outcome)",
};

/**
 * The `template` key of a channel that takes `parts`: each part inline (`title: "…"`) or from a
 * file (`title_file: path`, relative to the config file), not both. What the templates say is
 * checked at load by {@link readChannelTemplates}.
 */
export function templateConfigSchema(parts: TemplateParts) {
  const shape: Record<string, z.ZodOptional<z.ZodString>> = {};
  for (const part of Object.keys(parts) as TemplatePart[]) {
    shape[part] = z
      .string()
      .min(1, 'must not be empty')
      .max(MAX_TEMPLATE)
      .optional()
      .describe(`A Mustache template of ${PART_DOCS[part]} (README, "Templates").`);
    shape[`${part}_file`] = z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .describe(`A file holding the template of ${PART_DOCS[part]}, relative to the config file.`);
  }
  return z
    .strictObject(shape)
    .superRefine((t, ctx) => {
      for (const part of Object.keys(parts)) {
        if (t[part] !== undefined && t[`${part}_file`] !== undefined)
          ctx.addIssue({ code: 'custom', path: [`${part}_file`], message: `give ${part} or ${part}_file, not both` });
      }
    })
    .optional()
    .describe(
      'Overrides what the messages say (README, "Templates"); a part left out keeps the default from templates/.',
    );
}

/** The templates a channel renders with, one per part it takes. */
export type ChannelTemplates = Readonly<Partial<Record<TemplatePart, CompiledTemplate>>>;

/** The folder of the default templates: `templates/` beside `src/` and `dist/`. */
export const DEFAULT_TEMPLATE_DIR = fileURLToPath(new URL('../../../templates/', import.meta.url));

/**
 * The default templates of a medium (`templates/<medium>/<part>.mustache`), read and compiled.
 * Called once per channel module when it is loaded: a default that is missing or wrong is a
 * broken install, and says so at once.
 */
export function defaultTemplates(medium: string, parts: TemplateParts): ChannelTemplates {
  const out: Partial<Record<TemplatePart, CompiledTemplate>> = {};
  for (const [part, scope] of Object.entries(parts) as [TemplatePart, TemplateScope][]) {
    const file = path.join(DEFAULT_TEMPLATE_DIR, medium, `${part}.mustache`);
    const compiled = compileTemplate(fs.readFileSync(file, 'utf8'), scope);
    if (isTemplateProblem(compiled)) throw new Error(`default template ${file}: ${problemText(compiled)}`);
    out[part] = compiled;
  }
  return out;
}

/**
 * A channel's templates: those its config gives (already read from their files and checked at
 * load), the defaults for the rest. Throws on a template that does not compile, which only a
 * config that skipped the load's check can hold.
 */
export function channelTemplates(
  defaults: ChannelTemplates,
  parts: TemplateParts,
  given: Readonly<Record<string, string | undefined>> | undefined,
): ChannelTemplates {
  const out: Partial<Record<TemplatePart, CompiledTemplate>> = { ...defaults };
  for (const [part, scope] of Object.entries(parts) as [TemplatePart, TemplateScope][]) {
    const source = given?.[part];
    // The load reads every `_file` into its part: one left is a config that skipped the load.
    if (source === undefined && given?.[`${part}_file`] !== undefined)
      throw new Error(`template ${part}_file was never read: load the config with loadConfig`);
    if (source === undefined) continue;
    const compiled = compileTemplate(source, scope);
    if (isTemplateProblem(compiled)) throw new Error(`template ${part}: ${problemText(compiled)}`);
    out[part] = compiled;
  }
  return out;
}

/** "unknown field "sumary" at line 1, column 12". */
export function problemText(p: TemplateProblem): string {
  return `${p.message} at line ${p.line}, column ${p.column}`;
}

/**
 * Reads and checks every channel's templates in the raw config (`notify.channels`): each part
 * inline or from its file (relative to `baseDir`), compiled for the view its kind renders it with
 * (`partsOf(type)`; a kind without templates is left to the schema). Answers the problems, each
 * naming the channel and the position in the template, and per channel index the sources read,
 * which replace the `_file` keys in the loaded config.
 */
export function readChannelTemplates(
  raw: unknown,
  baseDir: string,
  partsOf: (type: string) => TemplateParts | undefined,
): { problems: KeyPathProblem[]; sources: Map<number, Record<string, string>> } {
  const problems: KeyPathProblem[] = [];
  const sources = new Map<number, Record<string, string>>();
  const channels = (raw as { notify?: { channels?: unknown } } | null)?.notify?.channels;
  if (!Array.isArray(channels)) return { problems, sources };
  channels.forEach((channel: unknown, i) => {
    if (typeof channel !== 'object' || channel === null) return;
    const { name, type, template } = channel as { name?: unknown; type?: unknown; template?: unknown };
    const parts = typeof type === 'string' ? partsOf(type) : undefined;
    if (!parts || typeof template !== 'object' || template === null) return;
    const who = `channel "${typeof name === 'string' ? name : `#${i + 1}`}"`;
    const read: Record<string, string> = {};
    for (const [part, scope] of Object.entries(parts) as [TemplatePart, TemplateScope][]) {
      const inline = (template as Record<string, unknown>)[part];
      const file = (template as Record<string, unknown>)[`${part}_file`];
      const key = typeof inline === 'string' ? part : `${part}_file`;
      const at = ['notify', 'channels', i, 'template', key];
      let source: string;
      let from = '';
      if (typeof inline === 'string') source = inline;
      else if (typeof file === 'string' && file !== '') {
        const resolved = path.resolve(baseDir, file);
        try {
          source = fs.readFileSync(resolved, 'utf8');
        } catch (err) {
          problems.push({ path: at, message: `${who}: template file ${resolved} ${unreadableText(err)}` });
          continue;
        }
        from = ` (${resolved})`;
      } else continue;
      const compiled = compileTemplate(source, scope);
      if (isTemplateProblem(compiled)) {
        problems.push({ path: at, message: `${who}: template ${part}${from} ${problemText(compiled)}` });
        continue;
      }
      read[part] = source;
    }
    sources.set(i, read);
  });
  return { problems, sources };
}
