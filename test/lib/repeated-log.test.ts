/**
 * Repeated log lines on a ManualClock: the first at once, the rest counted and said once per
 * interval with the count (`log.repeat_every`); told apart by message, error code and `distinct`;
 * flush says what is held.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { daemonLogger } from '../../src/cli/daemon-logger.js';
import { parseConfig } from '../../src/config/load-config.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { RepeatedLog, errorCode, setRepeatInterval } from '../../src/lib/repeated-log.js';
import { StoreError } from '../../src/state/store-error.js';
import { captureLogs } from '../api/log-capture.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function harness() {
  const clock = new ManualClock(0);
  const cap = captureLogs();
  const quiet = new RepeatedLog(cap.logger, { clock });
  const msgs = () => cap.records().map((r) => r.msg as string);
  return { clock, cap, quiet, msgs };
}

describe('RepeatedLog', () => {
  it('says the first at once, counts the rest, and says it again once the interval is over, with the count', () => {
    const h = harness();
    h.quiet.error({ err: refused() }, 'remediation pass failed');
    for (let i = 0; i < 1_233; i++) {
      h.clock.advance(40);
      h.quiet.error({ err: refused() }, 'remediation pass failed');
    }
    expect(h.msgs()).toEqual(['remediation pass failed']);
    h.clock.set(60_000);
    h.quiet.error({ err: refused() }, 'remediation pass failed');
    expect(h.msgs()).toEqual([
      'remediation pass failed',
      'remediation pass failed (repeated 1,234 times in the last 60 s)',
    ]);
    expect(h.cap.records()[1]).toMatchObject({ level: 50, repeated: 1_234 });
  });

  it.each([
    { key: 'repeat_every: 20s', said: 3 },
    { key: '', said: 1 },
  ])('a daemon with `log: { $key }` says a line failing every second for 59 s $said times', ({ key, said }) => {
    const config = parseConfig(
      `api: { base_url: "https://manage.example.com", token: t }\nlog: { format: json${key ? `, ${key}` : ''} }\n`,
      {},
      'x.yaml',
    );
    // Process-wide, in a worker that runs other files after this one: set back whatever happens.
    try {
      daemonLogger(config, new PassThrough());
      const h = harness();
      for (let s = 0; s < 60; s++) {
        h.quiet.error({ err: refused() }, 'remediation pass failed');
        h.clock.advance(1_000);
      }
      expect(h.msgs()).toHaveLength(said);
    } finally {
      setRepeatInterval(60_000);
    }
  });

  it('a reload (daemonLogger.apply) reaches the loops already running: their interval and their level', () => {
    const parse = (log: string) =>
      parseConfig(
        `api: { base_url: "https://manage.example.com", token: t }\nlog: { format: json, ${log} }\n`,
        {},
        'x.yaml',
      );
    try {
      const root = daemonLogger(parse('level: info'), new PassThrough());
      const child = root.child({ stage: 'api' }).child({ job: 'runs' });
      const h = harness();
      const failEverySecondFor = (seconds: number) => {
        for (let s = 0; s < seconds; s++) {
          h.quiet.error({ err: refused() }, 'remediation pass failed');
          h.clock.advance(1_000);
        }
      };
      failEverySecondFor(60);
      expect(h.msgs()).toHaveLength(1);
      expect(child.isLevelEnabled('debug')).toBe(false);

      daemonLogger.apply(root, parse('level: debug, repeat_every: 20s').log);
      failEverySecondFor(60);
      // The RepeatedLog made before the reload says the line every 20 s from then on.
      expect(h.msgs()).toHaveLength(4);
      expect([root.level, child.level]).toEqual(['debug', 'debug']);
    } finally {
      setRepeatInterval(60_000);
    }
  });

  it('a line said long after the last, with nothing held between, is said plainly', () => {
    const h = harness();
    h.quiet.warn({ err: refused() }, 'cannot renew');
    h.clock.advance(10 * 60_000);
    h.quiet.warn({ err: refused() }, 'cannot renew');
    expect(h.msgs()).toEqual(['cannot renew', 'cannot renew']);
  });

  it.each([
    ['another message', { err: refused() }, 'delivery round failed', ''],
    ['another error code', { err: new StoreError('/x.db', 'corrupt', 'damaged') }, 'remediation pass failed', ''],
    ['another distinct key', { err: refused() }, 'remediation pass failed', 'ops-mail'],
    ['a code given as a field', { err: 'text', code: 'SQLITE_CORRUPT' }, 'remediation pass failed', ''],
  ] as const)('%s is a line of its own, said at once', (_what, fields, msg, distinct) => {
    const h = harness();
    h.quiet.error({ err: refused() }, 'remediation pass failed');
    h.quiet.error({ ...fields }, msg, distinct);
    expect(h.msgs()).toEqual(['remediation pass failed', msg]);
  });

  it('the same code with another message text of the error counts as the same line', () => {
    const h = harness();
    h.quiet.error({ err: refused() }, 'pass failed');
    h.quiet.error(
      { err: Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:5432'), { code: 'ECONNREFUSED' }) },
      'pass failed',
    );
    expect(h.msgs()).toEqual(['pass failed']);
  });

  it('flush says every count held and forgets them', () => {
    const h = harness();
    h.quiet.error({ err: refused() }, 'a failed');
    h.quiet.error({ err: refused() }, 'a failed');
    h.quiet.error({ err: refused() }, 'a failed');
    h.quiet.error({ err: refused() }, 'b failed');
    h.clock.advance(12_400);
    h.quiet.flush();
    expect(h.msgs()).toEqual(['a failed', 'b failed', 'a failed (repeated 2 times in the last 12 s)']);
    h.quiet.error({ err: refused() }, 'a failed');
    expect(h.msgs()).toHaveLength(4);
  });

  it('remembers a bounded number of lines', () => {
    const clock = new ManualClock(0);
    const cap = captureLogs();
    const quiet = new RepeatedLog(cap.logger, { clock, maxKeys: 2 });
    for (const m of ['a', 'b', 'c', 'a']) quiet.error({}, m);
    // 'a' was forgotten when 'c' came, so it is said again.
    expect(cap.records().map((r) => r.msg)).toEqual(['a', 'b', 'c', 'a']);
  });

  it.each([
    [refused(), 'ECONNREFUSED'],
    [new StoreError('/x.db', 'unreachable', 'down', { cause: refused() }), 'unreachable'],
    [new Error('wrapped', { cause: refused() }), 'ECONNREFUSED'],
    [new TypeError('x'), 'TypeError'],
    ['text', 'string'],
    [undefined, ''],
  ])('errorCode(%s) is %s', (err, code) => {
    expect(errorCode(err)).toBe(code);
  });
});
