import { describe, expect, it } from 'vitest';
import type { AttentionItem } from '../../src/api/schemas.js';
import { attentionConfig, attention as detectAttention } from '../../src/detectors/attention.js';
import { contentHash } from '../../src/detectors/fingerprint.js';
import { attentionSnapshot, expectWellFormed, section } from './fixtures.js';

/** The findings alone; the incomplete sections have their own tests below. */
const attention = (...args: Parameters<typeof detectAttention>) => detectAttention(...args).findings;

/** Every section reported, every item at once. */
const INFO = attentionConfig.parse({ min_severity: 'info', fold_wait: '0s' });

const shop = {
  id: 1,
  name: 'shop-prod',
  namespace: 'acme',
  project: 'shop',
  environment_type: 'production',
  server: 'web-01',
  state: 'running',
};

describe('attention', () => {
  it('makes one finding per item, fingerprinted by rule, kind and id', () => {
    const findings = attention(
      attentionSnapshot([section({ items: [shop, { ...shop, id: 2, name: 'crm-prod' }] })]),
      INFO,
    );
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual([
      'attention/backup_failed/app/id/1',
      'attention/backup_failed/app/id/2',
    ]);
    expect(findings[0]).toMatchObject({
      check: 'attention',
      severity: 'critical',
      summary: 'Failed backups: shop-prod (production)',
      labels: {
        check: 'attention',
        rule: 'backup_failed',
        kind: 'app',
        namespace: 'acme',
        project: 'shop',
        environment_type: 'production',
        app: 'shop-prod',
        server: 'web-01',
      },
      details: { section: 'Failed backups', rule: 'backup_failed', id: '1', name: 'shop-prod' },
      subject: { type: 'attention', id: 1 },
    });
  });

  it('reports a section whose rule names a property of every object as any other rule', () => {
    const rules = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];
    const sections = rules.map((rule) => section({ rule, severity: 'danger', items: [{ id: 1 }] }));
    // With the checks running known, as the daemon's snapshot has them.
    const snap = { ...attentionSnapshot(sections), reporting: ['failed_runs', 'certificates'] };
    expect(attention(snap, INFO).map((f) => f.labels.rule)).toEqual(rules);
  });

  it.each<['info' | 'warning' | 'danger', string[]]>([
    ['info', ['danger', 'warning', 'info']],
    ['warning', ['danger', 'warning']],
    ['danger', ['danger']],
  ])('min_severity %s keeps the sections %j', (min_severity, kept) => {
    const snap = attentionSnapshot(
      (['danger', 'warning', 'info'] as const).map((severity) =>
        section({ rule: `r_${severity}`, severity, items: [{ id: 1 }] }),
      ),
    );
    const findings = attention(snap, { ...INFO, min_severity });
    expect(findings.map((f) => f.labels.rule)).toEqual(kept.map((s) => `r_${s}`));
    expect(findings.map((f) => f.severity)).toEqual(
      kept.map((s) => ({ danger: 'critical', warning: 'warning', info: 'info' })[s]),
    );
  });

  it.each<[string, string[], string[]]>([
    ['nothing ignored', [], ['failed_run', 'public_check_failed', 'custom_rule']],
    ['the rules our checks cover', ['failed_run', 'public_check_failed'], ['custom_rule']],
    ['a rule the service does not send', ['no_such_rule'], ['failed_run', 'public_check_failed', 'custom_rule']],
    ['every rule', ['failed_run', 'public_check_failed', 'custom_rule'], []],
  ])('ignore_rules, %s: reports the sections %j', (_, ignoreRules, kept) => {
    const snap = attentionSnapshot(
      ['failed_run', 'public_check_failed', 'custom_rule'].map((rule) =>
        section({ rule, count: 30, items: [{ id: 1 }] }),
      ),
    );
    const result = detectAttention(snap, { ...INFO, ignore_rules: ignoreRules });
    expect([...new Set(result.findings.map((f) => f.labels.rule))]).toEqual(kept);
    // An ignored section is not looked at, so it is not declared incomplete either.
    expect(result.incomplete).toEqual(kept.map((rule) => `attention/${rule}/`));
  });

  it('fingerprints an item without id by its content, whatever the key order', () => {
    const a: AttentionItem = {
      app: 'shop-prod',
      workflow: 'app_update',
      reason: 'timeout',
      at: '2026-11-01T10:00:00Z',
    };
    const b: AttentionItem = {
      at: '2026-11-01T10:00:00Z',
      reason: 'timeout',
      workflow: 'app_update',
      app: 'shop-prod',
    };
    const run = (item: AttentionItem) =>
      attention(attentionSnapshot([section({ rule: 'failed_runs', kind: 'failure', items: [item] })]), INFO);
    const [fa] = run(a);
    const [fb] = run(b);
    expect(fa?.fingerprint).toBe(`attention/failed_runs/failure/hash/${contentHash(a)}`);
    expect(fb?.fingerprint).toBe(fa?.fingerprint);
    expect(fa?.summary).toBe('Failed backups: shop-prod: timeout');
    expect(fa?.labels).toMatchObject({ kind: 'failure', app: 'shop-prod', workflow: 'app_update' });
    // A different item gets a different fingerprint.
    expect(run({ ...a, reason: 'disk full' })[0]?.fingerprint).not.toBe(fa?.fingerprint);
  });

  it('reports the same item listed twice once', () => {
    const findings = attention(attentionSnapshot([section({ items: [{ url: 'x' }, { url: 'x' }] })]), INFO);
    expect(findings).toHaveLength(1);
  });

  it('adds one finding for a section of a rule no check of ours covers with more items than listed, and the total to each item', () => {
    const items = Array.from({ length: 20 }, (_, i) => ({ id: i + 1, name: `app-${i + 1}` }));
    const findings = attention(attentionSnapshot([section({ count: 57, items })]), INFO);
    expectWellFormed(findings);
    expect(findings).toHaveLength(21);
    const more = findings.find((f) => f.fingerprint === 'attention/backup_failed/more');
    expect(more).toMatchObject({
      severity: 'critical',
      summary: 'Failed backups: 57 in all, only 20 listed',
      details: { count: '57', listed: '20' },
      labels: { check: 'attention', rule: 'backup_failed', kind: 'app' },
    });
    expect(findings[0]?.details.section_total).toBe('57 in all, 20 listed');
  });

  it('adds no section finding when every item is listed', () => {
    const findings = attention(attentionSnapshot([section({ items: [shop] })]), INFO);
    expect(findings.map((f) => f.fingerprint)).toEqual(['attention/backup_failed/app/id/1']);
    expect(findings[0]?.details.section_total).toBeUndefined();
  });

  it('keeps labels to known text values and links only web URLs', () => {
    const item = { id: 'u-7', url: 'https://shop.example.com', app: null, namespace: 3, extra: { nested: true } };
    const [finding] = attention(
      attentionSnapshot([section({ rule: 'cert', kind: 'url', severity: 'warning', items: [item] })]),
      INFO,
    );
    expectWellFormed([finding!]);
    expect(finding?.labels).toEqual({ check: 'attention', rule: 'cert', kind: 'url', namespace: '3' });
    expect(finding?.url).toBe('https://shop.example.com');
    expect(finding?.details.extra).toBe('{"nested":true}');
    expect(finding?.subject).toEqual({ type: 'attention' });
    expect(finding?.fingerprint).toBe('attention/cert/url/id/u-7');
  });

  it('gives the same fingerprints for the same summary every time', () => {
    const snap = () => attentionSnapshot([section({ count: 30, items: [shop, { reason: 'x' }] })]);
    const a = attention(snap(), INFO).map((f) => f.fingerprint);
    const b = attention(snap(), INFO).map((f) => f.fingerprint);
    expect(b).toEqual(a);
  });

  it.each<[string, number, number, string[]]>([
    ['every item listed', 3, 3, []],
    ['more counted than listed', 25, 20, ['attention/backup_failed/']],
    ['an empty section', 0, 0, []],
  ])('declares a section incomplete only when it lists fewer than it counts: %s', (_, count, listed, incomplete) => {
    const items = Array.from({ length: listed }, (_x, i) => ({ id: i + 1 }));
    const result = detectAttention(attentionSnapshot([section({ count, items })]), INFO);
    expect(result.incomplete).toEqual(incomplete);
    // The prefix covers the section's items (and its "more" finding), not another rule's.
    for (const f of result.findings) expect(f.fingerprint.startsWith('attention/backup_failed/')).toBe(true);
  });

  it('ends the prefix with "/" so a rule never covers a longer rule name', () => {
    const result = detectAttention(
      attentionSnapshot([
        section({ rule: 'cert', count: 30, items: [{ id: 1 }] }),
        section({ rule: 'cert_x', count: 1, items: [{ id: 2 }] }),
      ]),
      INFO,
    );
    expect(result.incomplete).toEqual(['attention/cert/']);
    expect(result.findings.some((f) => f.fingerprint.startsWith('attention/cert/'))).toBe(true);
    expect(
      result.findings.filter((f) => f.fingerprint.startsWith(result.incomplete[0]!)).map((f) => f.labels.rule),
    ).not.toContain('cert_x');
  });
});
