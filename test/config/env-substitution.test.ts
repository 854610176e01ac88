import { describe, expect, it } from 'vitest';
import { substituteEnv } from '../../src/config/env-substitution.js';

const env = { HOST: 'example.com', EMPTY: '', PORT: '587' };

/** Files as `${file:…}` reads them: a secret mounted with its trailing line break, and no other. */
const files: Record<string, string> = { '/run/secrets/smtp': 'hunter2\n', 'token.txt': 'tok\r\n' };
function readFile(path: string): string {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return text;
}

describe('substituteEnv', () => {
  it.each([
    ['plain text', 'plain text', false],
    ['${HOST}', 'example.com', true],
    ['https://${HOST}/x', 'https://example.com/x', false],
    ['${MISSING:-fallback}', 'fallback', true],
    ['${EMPTY:-fallback}', 'fallback', true],
    ['${HOST:-fallback}', 'example.com', true],
    ['${MISSING:-}', '', true],
    ['${MISSING:-a:b-c}', 'a:b-c', true],
    ['$${HOST}', '${HOST}', false],
    ['cost $5 and $$ and $HOST', 'cost $5 and $$ and $HOST', false],
    ['${HOST}:${PORT}', 'example.com:587', false],
    ['${EMPTY}', '', true],
    ['${file:/run/secrets/smtp}', 'hunter2', true],
    ['Bearer ${file:token.txt} for ${HOST}', 'Bearer tok for example.com', false],
  ])('%j becomes %j', (text, value, whole) => {
    expect(substituteEnv(text, env, readFile)).toMatchObject({ ok: true, value, whole });
  });

  it.each([
    ['${MISSING}', /environment variable MISSING is not set/],
    ['a ${HOST', /unterminated "\$\{"/],
    ['${1BAD}', /invalid variable reference "\$\{1BAD…}"/],
    ['${BAD-NAME}', /invalid variable reference/],
    ['${file:/run/secrets/gone}', /^file \/run\/secrets\/gone does not exist$/],
  ])('%j is an error', (text, message) => {
    const result = substituteEnv(text, env, readFile);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });

  it('never puts a variable value in an error message', () => {
    const result = substituteEnv(
      '${SECRET} ${file:/run/secrets/smtp} ${MISSING}',
      { SECRET: 'hunter2-very-secret' },
      readFile,
    );
    expect(!result.ok && result.message).not.toContain('hunter2');
  });
});
