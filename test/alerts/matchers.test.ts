import { describe, expect, it } from 'vitest';
import {
  atLeast,
  compileMatchers,
  formatMatcher,
  MatcherError,
  matchersFromConfig,
  parseMatcher,
  type LabelMatcher,
  type MatchableLabels,
} from '../../src/alerts/matchers.js';
import type { Severity } from '../../src/lib/alert-vocabulary.js';

describe('parseMatcher', () => {
  it.each<[string, LabelMatcher]>([
    ['app=shop', { name: 'app', op: '=', value: 'shop' }],
    ['app!=shop', { name: 'app', op: '!=', value: 'shop' }],
    ['app=~sh.*', { name: 'app', op: '=~', value: 'sh.*' }],
    ['check!~cert.*', { name: 'check', op: '!~', value: 'cert.*' }],
    [' app = shop ', { name: 'app', op: '=', value: 'shop' }],
    ['app=', { name: 'app', op: '=', value: '' }],
    ['app=""', { name: 'app', op: '=', value: '' }],
    ['reason="disk full"', { name: 'reason', op: '=', value: 'disk full' }],
    ['url=https://a.example/x?y=1', { name: 'url', op: '=', value: 'https://a.example/x?y=1' }],
    ['app=~a=b', { name: 'app', op: '=~', value: 'a=b' }],
    ['environment_type=production', { name: 'environment_type', op: '=', value: 'production' }],
  ])('%s', (text, expected) => {
    expect(parseMatcher(text)).toEqual(expected);
  });

  it.each([
    ['appshop', /expected NAME=VALUE/],
    ['', /expected NAME=VALUE/],
    ['=shop', /expected NAME=VALUE/],
    ['1app=shop', /expected NAME=VALUE/],
    ['app-name=shop', /expected NAME=VALUE/],
    ['app=~(unclosed', /not a regular expression RE2 takes/],
    // No lookaround or backreference: what a linear-time engine cannot do is refused when parsed.
    ['app=~(?=shop)shop', /not a regular expression RE2 takes.*\(\?=/],
    ['app=~(a)\\1', /not a regular expression RE2 takes/],
    ['app="unterminated\\"', /quoted value is not a valid string/],
  ])('rejects %j', (text, message) => {
    expect(() => parseMatcher(text)).toThrow(MatcherError);
    expect(() => parseMatcher(text)).toThrow(message);
  });

  it.each([
    'app=shop',
    'app!=shop',
    'app=~sh.*',
    'check!~cert.*',
    'app=""',
    'reason="disk full"',
    'app="~sh.*"',
    'app!="~"',
  ])('formatMatcher round-trips %s', (text) => {
    expect(parseMatcher(formatMatcher(parseMatcher(text)))).toEqual(parseMatcher(text));
  });
});

/** True when every matcher matches the labels (an empty list matches everything). */
const matchesAll = (labels: MatchableLabels, matchers: readonly LabelMatcher[]) => compileMatchers(matchers)(labels);

describe('compileMatchers', () => {
  const labels = { check: 'certificates', app: 'shop', environment_type: 'production', server: undefined };

  it.each<[string, string[], boolean]>([
    ['equal', ['app=shop'], true],
    ['equal, other value', ['app=crm'], false],
    ['not equal', ['app!=crm'], true],
    ['not equal, same value', ['app!=shop'], false],
    ['regex is anchored (prefix only does not match)', ['app=~sh'], false],
    ['regex matching the whole value', ['app=~sh.*'], true],
    ['regex alternation is anchored as a group', ['app=~crm|sho'], false],
    ['negative regex', ['check!~cert.*'], false],
    ['negative regex, no match', ['check!~backup.*'], true],
    ['missing label equals ""', ['namespace='], true],
    ['undefined label equals ""', ['server='], true],
    ['missing label is not equal to a value', ['namespace!=acme'], true],
    ['missing label does not match a non-empty regex', ['namespace=~.+'], false],
    ['missing label matches .*', ['namespace=~.*'], true],
    ['all must match', ['app=shop', 'environment_type=staging'], false],
    ['all match', ['app=shop', 'environment_type=production', 'check=~cert.*'], true],
    ['empty list matches everything', [], true],
  ])('%s', (_name, texts, expected) => {
    const matchers = texts.map(parseMatcher);
    expect(matchesAll(labels, matchers)).toBe(expected);
    expect(compileMatchers(matchers)(labels)).toBe(expected);
  });
});

describe('matchersFromConfig', () => {
  it('turns match, lists and match_re into matchers', () => {
    const matchers = matchersFromConfig({
      match: { environment_type: 'production', app: ['shop', 'crm.v2'], check: ['certificates'] },
      match_re: { server: 'web-\\d+' },
    });
    expect(matchers).toEqual([
      { name: 'environment_type', op: '=', value: 'production' },
      { name: 'app', op: '=~', value: 'shop|crm\\.v2' },
      { name: 'check', op: '=', value: 'certificates' },
      { name: 'server', op: '=~', value: 'web-\\d+' },
    ]);
  });

  it.each<[string, Record<string, string | undefined>, boolean]>([
    ['first of a list', { app: 'shop', environment_type: 'staging' }, true],
    ['second of a list', { app: 'crm.v2', environment_type: 'development' }, true],
    ['list values are literal, not regex', { app: 'crmXv2', environment_type: 'staging' }, false],
    ['not in the list', { app: 'blog', environment_type: 'staging' }, false],
    ['list on another label', { app: 'shop', environment_type: 'production' }, false],
  ])('a list means any of: %s', (_name, labels, expected) => {
    const matchers = matchersFromConfig({
      match: { app: ['shop', 'crm.v2'], environment_type: ['staging', 'development'] },
    });
    expect(matchesAll(labels, matchers)).toBe(expected);
  });

  it('an empty block matches everything', () => {
    expect(matchersFromConfig({})).toEqual([]);
    expect(matchesAll({ check: 'backups' }, matchersFromConfig({}))).toBe(true);
  });
  // A bad label name, an empty list and a bad regex are refused by the config schema: load-config.test.ts.
});

describe('atLeast', () => {
  it.each<[Severity, Severity, boolean]>([
    ['info', 'info', true],
    ['info', 'warning', false],
    ['warning', 'warning', true],
    ['warning', 'critical', false],
    ['critical', 'warning', true],
    ['critical', 'info', true],
  ])('%s at least %s: %s', (severity, min, expected) => {
    expect(atLeast(severity, min)).toBe(expected);
  });
});

describe('regular expressions that cannot run away', () => {
  // A backtracking engine takes exponential time over this pattern and a label that does not end
  // in X: the console's preview froze the daemon with it. RE2 answers in time linear in the label;
  // this test would time out, not fail an assertion, on the old engine.
  it.each(['=~', '!~'] as const)('%s answers at once over a long label with a pathological pattern', (op) => {
    const matches = compileMatchers([{ name: 'check', op, value: '(.?.?.?.?.?.?.?.?.?.?.?)*X' }]);
    expect(matches({ check: 'a'.repeat(5_000) })).toBe(op === '!~');
    expect(matches({ check: `${'a'.repeat(5_000)}X` })).toBe(op === '=~');
  });

  it('keeps the anchoring and dot-all semantics of Alertmanager matchers', () => {
    const matches = compileMatchers([{ name: 'app', op: '=~', value: 'sh.p' }]);
    expect(matches({ app: 'shop' })).toBe(true);
    expect(matches({ app: 'sh\np' })).toBe(true);
    expect(matches({ app: 'shopping' })).toBe(false);
    expect(matches({ app: 'a shop' })).toBe(false);
  });
});

describe('formatMatcher with a hidden character', () => {
  it('writes it as a JSON escape in quotes, which reads back as the character', () => {
    const matcher = { name: 'app', op: '=' as const, value: 'shop\u202egnp\u200b.exe' };
    const text = formatMatcher(matcher);
    expect(text).toBe('app="shop\\u202egnp\\u200b.exe"');
    expect(parseMatcher(text)).toEqual(matcher);
  });

  it('reads it back as every reader writes it out (`\\u{202e}`), quoted or not, so what is shown can be typed', () => {
    expect(parseMatcher('app=shop\\u{202e}gnp.exe').value).toBe('shop\u202egnp.exe');
    expect(parseMatcher('app="shop \\u{200B}x"').value).toBe('shop \u200bx');
    // Only a hidden character's: any other stays the text it is.
    expect(parseMatcher('app=a\\u{41}b').value).toBe('a\\u{41}b');
  });
});
