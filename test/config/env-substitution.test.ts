import { describe, expect, it } from 'vitest';
import { substituteEnv } from '../../src/config/env-substitution.js';

const env = { HOST: 'example.com', EMPTY: '', PORT: '587' };

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
  ])('%j becomes %j', (text, value, whole) => {
    expect(substituteEnv(text, env)).toMatchObject({ ok: true, value, whole });
  });

  it.each([
    ['${MISSING}', /environment variable MISSING is not set/],
    ['a ${HOST', /unterminated "\$\{"/],
    ['${1BAD}', /invalid variable reference "\$\{1BAD…}"/],
    ['${BAD-NAME}', /invalid variable reference/],
  ])('%j is an error', (text, message) => {
    const result = substituteEnv(text, env);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });

  it('never puts a variable value in an error message', () => {
    const result = substituteEnv('${SECRET} ${MISSING}', { SECRET: 'hunter2-very-secret' });
    expect(!result.ok && result.message).not.toContain('hunter2');
  });
});
