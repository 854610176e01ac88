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
      /** The variable that is not set, when that is what failed (not a malformed reference). */
      unset?: string;
    };

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/**
 * Replaces `${VAR}` and `${VAR:-default}` in `text` with values from `env`. `:-` uses the default
 * when the variable is unset or empty (as in the shell and Docker Compose); `$${` stands for a
 * literal `${`. A reference to an unset variable without a default, an unterminated `${` or a
 * malformed name is an error whose message names the variable, never a value. Defaults cannot
 * nest (`${A:-${B}}` is not supported).
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv): Substitution {
  let out = '';
  let i = 0;
  let references = 0;
  const variables: string[] = [];
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text[i];
      i += 1;
      continue;
    }
    const close = text.indexOf('}', i + 2);
    if (close === -1) {
      return { ok: false, message: 'has an unterminated "${" (write "$${" for a literal "${")' };
    }
    const inner = text.slice(i + 2, close);
    const m = REFERENCE.exec(inner);
    if (!m) {
      const name = inner.split(':-')[0] ?? inner;
      return {
        ok: false,
        message: `has an invalid variable reference "\${${name}…}": use \${NAME} or \${NAME:-default}, NAME being letters, digits and _`,
      };
    }
    const [, name, fallback] = m as unknown as [string, string, string | undefined];
    const value = env[name];
    if (value !== undefined && !(fallback !== undefined && value === '')) {
      out += value;
    } else if (fallback !== undefined) {
      out += fallback;
    } else {
      return {
        ok: false,
        message: `environment variable ${name} is not set (and no default is given with \${${name}:-…})`,
        unset: name,
      };
    }
    variables.push(name);
    references += 1;
    i = close + 1;
  }
  const whole = references === 1 && /^\$\{[^}]*\}$/.test(text);
  return { ok: true, value: out, whole, variables };
}
