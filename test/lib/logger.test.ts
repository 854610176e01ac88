/**
 * The daemon's own log as a terminal shows it: text from the service holding a right-to-left
 * override, a zero-width space, a C1 control or an escape sequence is written escaped, in JSON
 * lines (still valid JSON that parses back to the same value) and in the pretty format (the
 * visible `\u{202e}`), never obeyed.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { COMPONENT, createLogger, escapeLogLine } from '../../src/lib/logger.js';

const HOSTILE = 'shop\u202Egnp.exe \u200Bzero \u009bC1 \u001b[31mred\u001b[0m back\\slash';

function capture(
  format: 'json' | 'pretty',
  componentLevels?: Record<string, string>,
): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const log = createLogger({ format, destination: destination as never, level: 'info', componentLevels });
  return { lines, log };
}

describe('the log escapes what a terminal would obey', () => {
  it('JSON lines: no hazard raw, and the value parses back whole', () => {
    const { lines, log } = capture('json');
    log.warn({ app: HOSTILE }, `cannot read ${HOSTILE}`);
    const line = lines.join('');
    for (const hazard of ['\u202e', '\u200b', '\u009b', '\u001b']) expect(line).not.toContain(hazard);
    const parsed = JSON.parse(line) as { app: string; msg: string };
    expect(parsed.app).toBe(HOSTILE);
    expect(parsed.msg).toBe(`cannot read ${HOSTILE}`);
  });

  it('pretty: each hazard written out as \\u{…}, the message still one line', async () => {
    const { lines, log } = capture('pretty');
    log.warn({ app: HOSTILE }, `cannot read ${HOSTILE}`);
    await new Promise((r) => setTimeout(r, 50));
    const text = lines.join('');
    expect(text).not.toMatch(/[\u202e\u200b\u009b]/);
    expect(text).toContain('shop\\u{202e}gnp.exe');
    expect(text).toContain('\\u{1b}[31mred');
    expect(text).toContain('back\\slash');
  });

  it.each([
    ['a plain line', '{"msg":"ok"}\n', '{"msg":"ok"}\n'],
    ['an escaped backslash before n is not a line break', '{"msg":"a\\\\nb"}\n', '{"msg":"a\\\\nb"}\n'],
  ])('leaves %s as it is', (_what, line, expected) => {
    expect(escapeLogLine(line, 'pretty')).toBe(expected);
    expect(escapeLogLine(line, 'json')).toBe(expected);
  });
});

describe('a component whose level is raised (componentLevels)', () => {
  it("writes only that component's lines at or above its level, and every other line as before", () => {
    const { lines, log } = capture('json', { 'job-overruns': 'error' });
    const overruns = log.child({ [COMPONENT]: 'job-overruns' });
    overruns.warn('the runs read has taken 9s');
    overruns.child({ job: 'runs' }).warn('still the same component');
    overruns.error('an error of it');
    log.child({ [COMPONENT]: 'scheduler' }).warn('another component');
    log.info('the root');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([
      'an error of it',
      'another component',
      'the root',
    ]);
  });

  it('refuses a level pino does not know, naming it', () => {
    expect(() => capture('json', { 'job-overruns': 'loud' })).toThrow(/unknown log level "loud"/);
  });
});

describe('an error in the log', () => {
  it("the API client's, by what went wrong and without a stack; any other with its stack", () => {
    const { lines, log } = capture('json');
    const refused = new ApiError('whoami', { code: 'invalid_token', status: 401, message: 'the token is not valid' });
    log.warn({ err: refused }, 'cannot read runs');
    log.error({ err: new TypeError('x is undefined') }, 'a bug');
    const [api, bug] = lines.map((l) => JSON.parse(l) as { err: Record<string, unknown> });
    expect(api?.err).toEqual({
      name: 'ApiError',
      fn: 'whoami',
      message: 'whoami: invalid_token (HTTP 401): the token is not valid',
      attempts: 0,
      code: 'invalid_token',
      status: 401,
    });
    expect(bug?.err).toMatchObject({ type: 'TypeError', message: 'x is undefined' });
    expect(bug?.err.stack).toContain('TypeError: x is undefined\n    at ');
  });
});
