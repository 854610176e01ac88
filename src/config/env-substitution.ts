import { unreadableText } from './config-error.js';

/** The outcome of substituting variables in one string. */
export type Substitution =
  | {
      ok: true;
      value: string;
      /** True when the text was exactly one `${VAR}` reference and nothing else. */
      whole: boolean;
      /** The variables read (set or defaulted), for logs and tests. */
      variables: string[];
    }
  | {
      ok: false;
      message: string;
      /** The variable that is not set (or `file:PATH`, unreadable), when that is what failed (not a malformed reference). */
      unset?: string;
    };

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** A file's reference, `${file:PATH}`: the file's text stands for it (a secret mounted as a file). */
const FILE_REFERENCE = /^file:(.+)$/s;

/**
 * Replaces `${VAR}` and `${VAR:-default}` in `text` with values from `env`. `:-` uses the default
 * when the variable is unset or empty (as in the shell and Docker Compose); `$${` stands for a
 * literal `${`. A reference to an unset variable without a default, an unterminated `${` or a
 * malformed name is an error whose message names the variable, never a value. Defaults cannot
 * nest (`${A:-${B}}` is not supported). `${file:PATH}` is the text `readFile` gives for PATH, its
 * surrounding whitespace trimmed as for `api.token_file` (Kubernetes' and Docker's secrets are files); a file it cannot
 * read is an error that names the file and why.
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv, readFile: (path: string) => string): Substitution {
  const variables: string[] = [];
  // The first reference that cannot be substituted, if one cannot: the text is then not substituted.
  const failures: Extract<Substitution, { ok: false }>[] = [];
  // `$${` (no reference), or a reference: `${`, its text up to the next `}`, and that `}` if there is one.
  const value = text.replace(/\$\$\{|\$\{([^}]*)(\})?/g, (_, inner?: string, close?: string) => {
    if (inner === undefined) return '${';
    if (failures.length > 0) return '';
    if (close === undefined) {
      failures.push({ ok: false, message: 'has an unterminated "${" (write "$${" for a literal "${")' });
      return '';
    }
    const file = FILE_REFERENCE.exec(inner)?.[1];
    if (file !== undefined) {
      try {
        const read = readFile(file).trim();
        variables.push(`file:${file}`);
        return read;
      } catch (err) {
        failures.push({ ok: false, message: `file ${file} ${unreadableText(err)}`, unset: `file:${file}` });
        return '';
      }
    }
    const m = REFERENCE.exec(inner);
    if (!m) {
      const name = inner.split(':-')[0] ?? inner;
      const message = `has an invalid variable reference "\${${name}…}": use \${NAME} or \${NAME:-default}, NAME being letters, digits and _`;
      failures.push({ ok: false, message });
      return '';
    }
    const [, name, fallback] = m as unknown as [string, string, string | undefined];
    const set = env[name];
    const read = set !== undefined && !(fallback !== undefined && set === '') ? set : fallback;
    if (read === undefined) {
      const message = `environment variable ${name} is not set (and no default is given with \${${name}:-…})`;
      failures.push({ ok: false, message, unset: name });
      return '';
    }
    variables.push(name);
    return read;
  });
  if (failures[0]) return failures[0];
  const whole = variables.length === 1 && /^\$\{[^}]*\}$/.test(text);
  return { ok: true, value, whole, variables };
}
