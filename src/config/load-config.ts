import fs from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { z } from 'zod';
import { ConfigError, fileError, unreadableText, type ConfigProblem } from './config-error.js';
import { configJsonSchema } from './config-json-schema.js';
import { checkReferences } from './config-references.js';
import { configSchema, DEFAULT_STATE_PATH, type ParsedConfig } from './config-schema.js';
import { substituteEnv, type Substitution } from './env-substitution.js';
import { Secret } from '../lib/secret.js';
import { isNode, schemaNodesAt } from './schema-nodes.js';
import { unsetStandIn } from './unset-stand-in.js';
import { secretPaths } from './secret.js';
import { formatKeyPath, lineOfPath, type KeyPath, type KeyPathProblem } from './yaml-lines.js';
import { errorText } from '../lib/error-text.js';
import { setAt, valueAt } from '../lib/value-at.js';
import { CHANNEL_KINDS } from '../notify/channels/registry.js';
import type { ChannelKind } from '../notify/channels/channel.js';
import { readChannelTemplates, type TemplateParts } from '../notify/channels/template-config.js';
import { ownValue } from '../lib/own-value.js';

/**
 * The loaded configuration: every default filled, durations in ms, `off` as null, secrets as
 * {@link Secret}, `api.token` read from `token_file` when that was given, `state.path` absolute.
 */
export type Config = Omit<ParsedConfig, 'api' | 'state'> & {
  api: Omit<ParsedConfig['api'], 'token'> & { token: Secret };
  state: StateConfig;
};

/**
 * The `state` section once loaded: a SQLite file (`path`, absolute; the default file when the
 * section names neither) or a PostgreSQL database (`url`), never both; `tls.ca_file` absolute.
 */
export type StateConfig = Omit<ParsedConfig['state'], 'path' | 'url'> &
  ({ path: string; url?: undefined } | { path?: undefined; url: Secret });

/** Where a check of the file says a problem it found: at a key path, with a message. */
type Report = (p: KeyPath, message: string) => void;

/**
 * A configuration read with a stand-in for each value whose `${VAR}` is not set (see
 * {@link loadConfigWithUnset}), and those values: where, and which variable.
 */
export interface ConfigWithUnset {
  config: Config;
  /** One per value whose variable is not set, as a problem (path, line, `unsetVariable`); in line order. */
  unset: ConfigProblem[];
  /** One per secret written in the file itself rather than read from `${VAR}`: a warning each, in line order. */
  inlineSecrets: ConfigProblem[];
}

/**
 * Reads and parses the configuration file at `file`. Relative paths inside it are taken relative
 * to the file's directory (as Prometheus does), so the daemon behaves the same from any directory.
 * Throws {@link ConfigError} listing every problem.
 */
export function loadConfig(file: string, env: NodeJS.ProcessEnv): Config {
  return loadConfigWithUnset(file, env, false).config;
}

/**
 * Reads the configuration file at `file` as {@link loadConfig} does, except that a `${VAR}` that is
 * not set is no problem: the value is checked with a stand-in of its type (`unset-stand-in.ts`)
 * and listed in `unset`, so everything else in the file is checked as it would be with the
 * variable set. For `validate` where the daemon's secrets are not (CI), and for the commands that
 * use none of them. Throws {@link ConfigError} for every other problem. With `standIns` false, an
 * unset variable is a problem too (as in {@link loadConfig}), and `unset` is empty.
 */
export function loadConfigWithUnset(file: string, env: NodeJS.ProcessEnv, standIns = true): ConfigWithUnset {
  let bytes: Buffer;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_CONFIG_FILE_SIZE) throw fileError(file, tooLargeText(size));
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw fileError(file, `cannot read the configuration file: ${why}`);
  }
  const text = utf8Text(bytes, file);
  try {
    return readConfig(text, env, file, path.dirname(path.resolve(file)), standIns);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    // A file must never crash the daemon (SIGHUP) or the CLI: whatever else went wrong reading it
    // is a problem of the file, said the same way.
    throw fileError(file, `cannot be read: ${errorText(err)}`);
  }
}

/**
 * One section of the configuration, as the commands that use that section alone need it: the
 * state commands (alerts, silence, silences, unsilence, actions) the `state` section, the health
 * check the `server` section. The whole file is checked as {@link loadConfig} checks it, but only
 * the variables the section uses must be set: those commands never use the API token or a
 * channel's secrets, which an operator's shell usually does not have (the daemon keeps them in its
 * own environment), so a printed "To silence" line works as printed. Throws {@link ConfigError}.
 */
export function loadConfigSection<K extends 'state' | 'server' | 'alerts'>(
  file: string,
  env: NodeJS.ProcessEnv,
  section: K,
): Config[K] {
  const { config, unset } = loadConfigWithUnset(file, env);
  const needed = unset.filter((p) => p.path === section || p.path.startsWith(`${section}.`));
  if (needed.length > 0) throw new ConfigError(file, needed);
  return config[section];
}

/**
 * The largest configuration file read: 1 MiB, a Kubernetes ConfigMap's own limit and 25 times
 * config.example.yaml with every key and comment. A larger file is not a configuration (a log or
 * a dump given by mistake), and parsing one blocks the daemon (on SIGHUP) for seconds per 10 MiB.
 */
const MAX_CONFIG_FILE_SIZE = 1024 * 1024;

function tooLargeText(size: number): string {
  const most = `${MAX_CONFIG_FILE_SIZE / (1024 * 1024)} MiB (${MAX_CONFIG_FILE_SIZE} bytes)`;
  return `is ${size} bytes, more than the ${most} a configuration file may be (a full one is about 40 KiB): is it the right file?`;
}

/**
 * The file's bytes as text, or a {@link ConfigError} at the first line that is not UTF-8 (a file
 * saved as Latin-1 or Windows-1252): read leniently, each such byte would become U+FFFD in a value
 * (a sender name, a template) without a word.
 */
function utf8Text(bytes: Buffer, file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const lenient = bytes.toString('utf8');
    const line = lenient.slice(0, lenient.indexOf('\uFFFD')).split('\n').length;
    throw fileError(file, 'is not UTF-8 text: save the file as UTF-8', line);
  }
}

/**
 * The document without its top-level `x-…` keys: the file's own, to hold anchors that the real
 * sections alias (`x-channels: &slack …`), as Compose files do; nothing reads them.
 */
function withoutExtensions(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith('x-')));
}

/** The YAML document of configuration text, or a {@link ConfigError} for its first syntax error. */
function parseYaml(text: string, sourceName: string): { doc: Document; lines: LineCounter } {
  const lines = new LineCounter();
  // `merge`: YAML 1.1 merge keys (`<<: *defaults`), which Compose-style files use with anchors.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) {
    // The first error only: the parser's later ones are mostly echoes of it.
    const first = doc.errors[0]!;
    const more = doc.errors.length - 1;
    const after = more > 0 ? ` (and ${more} more after it, likely caused by it)` : '';
    const why = first.code === 'DUPLICATE_KEY' ? duplicateKeyText(doc, lines, first.pos[0]) : undefined;
    const message = `YAML syntax error: ${why ?? yamlErrorText(first.message)}${after}`;
    throw fileError(sourceName, message, lines.linePos(first.pos[0]).line);
  }
  return { doc, lines };
}

/**
 * Which key a mapping gives twice (the one at offset `at`) and the line of its first use, which the
 * parser's "Map keys must be unique" leaves out; undefined if the key is not found.
 */
function duplicateKeyText(doc: Document, lines: LineCounter, at: number): string | undefined {
  let text: string | undefined;
  visit(doc, {
    Map(_key, map) {
      const twice = map.items.find((p) => isScalar(p.key) && p.key.range?.[0] === at)?.key;
      if (!isScalar(twice)) return undefined;
      const first = map.items.find((p) => isScalar(p.key) && p.key.value === twice.value)?.key;
      const line = isScalar(first) && first.range ? ` (first at line ${lines.linePos(first.range[0]).line})` : '';
      text = `"${String(twice.value)}" is given twice in one mapping${line}: merge the two, or remove one`;
      return visit.BREAK;
    },
  });
  return text;
}

/**
 * Parses configuration text: YAML, then `${VAR}` substitution in string values, then the schema
 * and the checks between sections. Throws {@link ConfigError} listing every problem with its key
 * path and line; `sourceName` is the file name shown in messages. Relative `api.token_file` and
 * `state.path` are resolved against `options.baseDir`, the current directory by default.
 */
export function parseConfig(
  text: string,
  env: NodeJS.ProcessEnv,
  sourceName: string,
  options: { baseDir?: string } = {},
): Config {
  return readConfig(text, env, sourceName, options.baseDir ?? process.cwd(), false).config;
}

/**
 * {@link parseConfig}, and with `standIns` a value whose variable is not set is listed in `unset`
 * and checked with a stand-in, instead of being a problem.
 */
function readConfig(
  text: string,
  env: NodeJS.ProcessEnv,
  sourceName: string,
  baseDir: string,
  standIns: boolean,
): ConfigWithUnset {
  const { doc, lines } = parseYaml(text, sourceName);

  const problemAt = (p: KeyPath, message: string, unsetVariable?: string): ConfigProblem => ({
    path: formatKeyPath(p),
    line: lineOfPath(doc, lines, p),
    message,
    ...(unsetVariable ? { unsetVariable } : {}),
  });
  const problems: ConfigProblem[] = [];
  const at = (p: KeyPath, message: string, unsetVariable?: string) =>
    problems.push(problemAt(p, message, unsetVariable));

  // A value whose substitution failed is reported once, not again by the schema (or the checks
  // between sections) for its `${…}`.
  const unsubstituted = new Set<string>();
  const unset: { path: KeyPath; problem: ConfigProblem }[] = [];
  // The variables each substituted value was read from, by key path.
  const readFrom = new Map<string, string[]>();
  const readFile = (file: string) => fs.readFileSync(path.resolve(baseDir, file), 'utf8');
  substituteNode(doc.contents, [], { env, readFile }, (p, result) => {
    if (result.ok) {
      if (result.variables.length > 0) readFrom.set(formatKeyPath(p), result.variables);
      return;
    }
    unsubstituted.add(formatKeyPath(p));
    const { message, unset: variable } = result;
    if (standIns && variable !== undefined) unset.push({ path: p, problem: problemAt(p, message, variable) });
    else at(p, message, variable);
  });
  // What the checks find, but for a value whose `${…}` is reported already.
  const found = (p: KeyPath, message: string) => unsubstituted.has(formatKeyPath(p)) || at(p, message);
  const raw = withoutExtensions(documentValue(doc, lines, sourceName));
  for (const { path: p } of unset) setAt(raw, p, unsetStandIn(p, raw, String(valueAt(raw, p))));

  const parsed = configSchema.safeParse(raw, { error: friendlyMessage });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (unsubstituted.has(formatKeyPath(issue.path))) continue;
      for (const p of issueProblems(issue, raw)) at(p.path, p.message);
    }
  }
  const templates = readChannelTemplates(raw, baseDir, templatePartsOf);
  for (const p of [...checkReferences(raw), ...templates.problems]) found(p.path, p.message);
  const tokenFile = readTokenFile(raw, baseDir, at, unsubstituted, readFrom);
  if (parsed.success && !unsubstituted.has('state.tls.ca_file')) checkCaFile(parsed.data.state, baseDir, at);

  const unsetProblems = unset.map((u) => u.problem).sort(byLine);
  if (problems.length > 0) throw new ConfigError(sourceName, problems.sort(byLine));
  // Every issue left is a stand-in's: the file cannot be checked further without those variables.
  if (!parsed.success) throw new ConfigError(sourceName, unsetProblems);
  const config = parsed.data;
  const inlineSecrets = secretPaths(config)
    .filter((p) => !readFrom.has(formatKeyPath(p)) && !unsubstituted.has(formatKeyPath(p)))
    .map((p) => problemAt(p, INLINE_SECRET));
  // The schema requires token or token_file, and a token_file that could not be read is a problem thrown above.
  const token = (config.api.token ?? tokenFile)!;
  return {
    config: {
      ...config,
      api: { ...config.api, token },
      state: resolvedState(config.state, baseDir),
      notify: { ...config.notify, channels: withTemplateSources(config.notify.channels, templates.sources) },
    },
    unset: unsetProblems,
    inlineSecrets,
  };
}

/** Why a secret written in the file is worth a warning, and what to write instead. */
const INLINE_SECRET =
  'is a secret written in the file itself, so whoever reads the file (its copies, its Git history) has it: write ${VAR} here and set VAR in the environment of the daemon';

/** The template parts a channel kind takes, by its `type`; undefined for a kind without templates or an unknown type. */
function templatePartsOf(type: string): TemplateParts | undefined {
  return ownValue<ChannelKind>(CHANNEL_KINDS, type)?.templateParts;
}

/**
 * The channels with their templates as text: each `<part>_file` read (by `readChannelTemplates`)
 * becomes `<part>`, so a channel never reads a file and a reload reads them anew.
 */
function withTemplateSources<C extends object>(
  channels: readonly C[],
  sources: ReadonlyMap<number, Record<string, string>>,
): C[] {
  return channels.map((c, i) => {
    const read = sources.get(i);
    return 'template' in c && c.template && read ? { ...c, template: read } : c;
  });
}

/** The state section with its files resolved against the config's directory (see {@link StateConfig}). */
function resolvedState(state: ParsedConfig['state'], baseDir: string): StateConfig {
  const { path: file, url, tls, ...rest } = state;
  const resolvedTls = tls && { ...tls, ...(tls.ca_file ? { ca_file: path.resolve(baseDir, tls.ca_file) } : {}) };
  if (url) return { ...rest, url, ...(resolvedTls ? { tls: resolvedTls } : {}) };
  return { ...rest, path: path.resolve(baseDir, file ?? DEFAULT_STATE_PATH) };
}

function byLine(a: ConfigProblem, b: ConfigProblem): number {
  return (a.line ?? 0) - (b.line ?? 0);
}

/**
 * How far YAML aliases may expand: the number of times an anchored node is repeated, weighted by
 * the aliases inside it (the `yaml` package's `maxAliasCount`). Its default of 100 refused an
 * ordinary file with 101 routes sharing `channels: *c`; an alias bomb ("billion laughs") passes
 * any such figure within a few levels, so a generous bound costs nothing and still stops one.
 */
export const MAX_ALIAS_EXPANSION = 10_000;

/**
 * The document as plain data. The one failure left at this point is an alias bomb (the parser
 * throws a ReferenceError), reported as a problem of the file at the first alias, like any other.
 */
function documentValue(doc: Document, lines: LineCounter, sourceName: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_EXPANSION }) ?? {};
  } catch (err) {
    let line: number | undefined;
    visit(doc, {
      Alias(_key, node) {
        if (node.range) line = lines.linePos(node.range[0]).line;
        return visit.BREAK;
      },
    });
    const why =
      err instanceof ReferenceError
        ? `its aliases expand to more than ${MAX_ALIAS_EXPANSION} nodes`
        : (err as Error).message;
    const fix = 'write the repeated parts out, or use fewer aliases of large anchors';
    throw fileError(sourceName, `YAML cannot be read: ${why}; ${fix}`, line);
  }
}

/**
 * The parser's message without any quoted source text (`Unexpected scalar token in YAML stream:
 * "…"`) or position suffix: the line is reported apart, and the source may hold a secret.
 */
function yamlErrorText(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?\s*$/, '').replace(/:\s*".*$/s, '');
}

/**
 * Substitutes `${VAR}` in every string value of `node` and below (whose key path is `p`; never in
 * keys), on the parsed nodes rather than the raw text so a variable's value cannot inject YAML. A
 * plain (unquoted) value that is one whole reference takes the type its value reads as (`port:
 * ${SMTP_PORT}` is a number); quote it to keep a string. `done` hears how each value with a
 * `${…}` went: substituted (with the variables it was read from), or why it cannot be.
 */
function substituteNode(
  node: unknown,
  p: PropertyKey[],
  from: { env: NodeJS.ProcessEnv; readFile: (file: string) => string },
  done: (p: KeyPath, result: Substitution) => void,
): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      substituteNode(pair.value, [...p, key], from, done);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => substituteNode(item, [...p, i], from, done));
  } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
    const result = substituteEnv(node.value, from.env, from.readFile);
    if (result.ok) node.value = node.type === 'PLAIN' && result.whole ? scalarOf(result.value) : result.value;
    done(p, result);
  }
}

/** Reads a plain scalar's text as YAML would, limited to numbers and booleans. */
function scalarOf(text: string): string | number | boolean {
  if (/^[-+]?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  return text;
}

/**
 * The token in `api.token_file`, read. In `unsubstituted` (the key paths whose variable is not
 * set): there is no file to read (that is reported already); its stand-in is the token. In
 * `readFrom`: the variables its name was read from, named in a problem instead of the name they
 * gave, which may be the token itself (`token_file: ${DMS_API_TOKEN}` for `token:`).
 */
function readTokenFile(
  raw: unknown,
  baseDir: string,
  at: Report,
  unsubstituted: ReadonlySet<string>,
  readFrom: ReadonlyMap<string, string[]>,
): Secret | undefined {
  const file = valueAt(raw, ['api', 'token_file']);
  if (typeof file !== 'string' || file === '') return undefined;
  if (unsubstituted.has('api.token_file')) return new Secret(file);
  const resolved = path.resolve(baseDir, file);
  const variables = readFrom.get('api.token_file');
  const named = variables ? `the file ${variables.map((v) => `\${${v}}`).join(' and ')} names` : resolved;
  let content: string;
  try {
    content = fs.readFileSync(resolved, 'utf8');
  } catch (err) {
    const denied = (err as NodeJS.ErrnoException).code === 'EACCES';
    at(['api', 'token_file'], `${named} ${denied ? 'cannot be read (permission denied)' : unreadableText(err)}`);
    return undefined;
  }
  const token = content.trim();
  if (token === '') {
    at(['api', 'token_file'], `${named} is empty`);
    return undefined;
  }
  return new Secret(token);
}

/** `state.tls.ca_file`, when given, must be a file this process can read (the daemon reads it to connect). */
function checkCaFile(state: ParsedConfig['state'], baseDir: string, at: Report): void {
  const file = state.tls?.ca_file;
  if (file === undefined) return;
  const resolved = path.resolve(baseDir, file);
  try {
    fs.accessSync(resolved, fs.constants.R_OK);
  } catch (err) {
    at(['state', 'tls', 'ca_file'], `${resolved} ${unreadableText(err)}`);
  }
}

/** Turns one zod issue into located problems (one per unknown key). */
function issueProblems(issue: z.core.$ZodIssue, raw: unknown): KeyPathProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: [...issue.path, key],
      message: `unknown key "${key}"${suggestion(key, knownKeysAt(issue.path, raw))}`,
    }));
  }
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0]?.message ?? issue.message;
    return [{ path: issue.path, message: `is not an accepted key: ${inner}` }];
  }
  return [{ path: issue.path, message: issue.message }];
}

/** Default messages in the operator's words; messages set in the schema take precedence. */
function friendlyMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      // `enabled: yes` is a boolean to YAML 1.1 tools (yamllint, Ansible), text to YAML 1.2 and to us.
      if (issue.expected === 'boolean' && typeof issue.input === 'string')
        return 'must be true or false, unquoted, not a string (yes, no, on and off are text in YAML 1.2)';
      return `must be ${article(String(issue.expected))}, not ${describe(issue.input)}`;
    case 'invalid_value': {
      const values = issue.values.map((v) => JSON.stringify(v));
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(', ')}`;
    }
    case 'too_small': {
      const n = Number(issue.minimum);
      if (issue.origin === 'array') return `must have at least ${n} item${n === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return n === 1 ? 'must not be empty' : `must be at least ${n} characters`;
      return issue.inclusive ? `must be at least ${n}` : `must be greater than ${n}`;
    }
    case 'too_big': {
      const n = Number(issue.maximum);
      if (issue.origin === 'array') return `must have at most ${n} items`;
      if (issue.origin === 'string') return `must be at most ${n} characters`;
      return issue.inclusive ? `must be at most ${n}` : `must be less than ${n}`;
    }
    case 'invalid_union':
      if ('note' in issue && issue.note === 'No matching discriminator') {
        const options = ((issue as { options?: unknown[] }).options ?? []).map((o) => JSON.stringify(o));
        return `must be one of ${options.join(', ')}`;
      }
      return undefined;
    default:
      return undefined;
  }
}

function article(type: string): string {
  if (type === 'array') return 'a list';
  // A record is a mapping of free keys (`max_age: { production: 26h }`): to its author, a mapping.
  if (type === 'object' || type === 'record') return 'a mapping (key: value)';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The kind of a value, never the value itself (it may be a secret). */
function describe(value: unknown): string {
  if (value === null) return 'null (an empty value)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return article(typeof value);
}

/** The keys the schema accepts at `path`, read from the JSON Schema (for "did you mean"). */
function knownKeysAt(at: KeyPath, raw: unknown): string[] {
  const nodes = schemaNodesAt(configJsonSchema(), at, raw);
  return [...new Set(nodes.flatMap((n) => (isNode(n.properties) ? Object.keys(n.properties) : [])))];
}

/** ` (did you mean "x"?)` for the closest known key within a small edit distance. */
function suggestion(key: string, known: readonly string[]): string {
  const distances = known.map((k) => editDistance(key.toLowerCase(), k.toLowerCase()));
  const bestDistance = Math.min(...distances);
  const best = known[distances.indexOf(bestDistance)];
  const allowed = Math.max(1, Math.floor(key.length / 3));
  return best !== undefined && bestDistance <= allowed ? ` (did you mean "${best}"?)` : '';
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let prevPrev = prev;
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      // A swap of two neighbours (`prot` for `port`) counts as one edit.
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] ?? 0, (prevPrev[j - 2] ?? 0) + 1);
      }
    }
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}
