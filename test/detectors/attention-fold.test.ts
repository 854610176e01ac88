/**
 * One problem, one alert: an attention item about a record one of our own checks already reports is
 * folded into that alert (no finding, a named reason, its fingerprint kept as it is); an item we
 * cannot match still alerts, after `fold_wait` when it names a record our checks might report yet.
 */
import { describe, expect, it } from 'vitest';
import type { AttentionItem, AttentionSection } from '../../src/api/schemas.js';
import type { OpenSubject } from '../../src/lib/alert-vocabulary.js';
import { attention, attentionConfig } from '../../src/detectors/attention.js';
import { attentionSnapshot, MINUTE, section } from './fixtures.js';

const WAIT = 20 * MINUTE;
/** Every section reported; `fold_wait` by default, {@link WAIT}. */
const OPTIONS = attentionConfig.parse({ min_severity: 'info' });

/** The simulator's item shapes (`packages/simulator/src/problem-finder.ts`), cut to what matching reads. */
const failure = { rule: 'failed_run', kind: 'failure', label: 'Failed runs' } as const;
const url = { rule: 'certificate_expired', kind: 'url', label: 'Expired certificates' } as const;
const app = { rule: 'backup_critical', kind: 'app', label: 'Backups critically old' } as const;
const runItem = { id: 5981, run_id: 5981, app_id: 3, app: 'shop', environment_type: 'staging', reason: 'pip failed' };
const urlItem = { id: 40, url: 'https://shop.example.com', app_id: 3, app: 'shop' };
const appItem = { id: 3, app_id: 3, name: 'shop', detail: 'newest backup is 50 h old', backup_id: 77 };

const reportedBy = (check: string, type: OpenSubject['subject']['type'], id: number): OpenSubject => ({
  check,
  subject: { type, id },
});

function detect(
  where: Pick<AttentionSection, 'rule' | 'kind' | 'label'>,
  item: AttentionItem,
  reported: OpenSubject[],
  foldWaitMs = WAIT,
) {
  const snapshot = { ...attentionSnapshot([section({ ...where, items: [item] })]), reported };
  return attention(snapshot, { ...OPTIONS, fold_wait: foldWaitMs });
}

describe('attention items our checks already report', () => {
  it.each<[string, Pick<AttentionSection, 'rule' | 'kind' | 'label'>, AttentionItem, OpenSubject, string]>([
    ['a failed run', failure, runItem, reportedBy('failed_runs', 'run', 5981), 'failed_runs (run 5981)'],
    ['a stuck run', failure, runItem, reportedBy('stuck_runs', 'run', 5981), 'stuck_runs (run 5981)'],
    [
      'a run named only by its id',
      failure,
      { id: 5981 },
      reportedBy('failed_runs', 'run', 5981),
      'failed_runs (run 5981)',
    ],
    [
      'a run id written as text',
      failure,
      { run_id: '5981' },
      reportedBy('failed_runs', 'run', 5981),
      'failed_runs (run 5981)',
    ],
    ['an expired certificate', url, urlItem, reportedBy('certificates', 'url', 40), 'certificates (url 40)'],
    ['a URL that does not answer', url, urlItem, reportedBy('url_checks', 'url', 40), 'url_checks (url 40)'],
    ['an app whose backups are old', app, appItem, reportedBy('backups', 'app', 3), 'backups (app 3)'],
    ['an app item naming a backup', app, appItem, reportedBy('backups', 'backup', 77), 'backups (backup 77)'],
    ['an app in maintenance', app, appItem, reportedBy('maintenance', 'app', 3), 'maintenance (app 3)'],
  ])('%s: folded into that alert, with the reason named', (_what, where, item, reported, by) => {
    const result = detect(where, item, [reportedBy('app_state', 'app', 999), reported]);
    expect(result.findings).toEqual([]);
    const [folded] = result.folded ?? [];
    expect(folded?.reason).toBe(`reported by ${by}`);
    // The alert it goes into, for the quiet close of an item's own alert opened before ours.
    expect(folded?.into).toBe(by);
    // Never resolved as "over" if it had opened before ours: one whole fingerprint, not a prefix of others.
    expect(result.incomplete).toEqual([folded?.fingerprint]);
    expect(folded?.fingerprint).toMatch(new RegExp(`^attention/${where.rule}/`));
    expect(folded?.fingerprint.endsWith('/')).toBe(false);
  });

  it.each<[string, Pick<AttentionSection, 'rule' | 'kind' | 'label'>, AttentionItem, OpenSubject[]]>([
    ['nothing of ours is open', failure, runItem, []],
    ['ours is about another run', failure, runItem, [reportedBy('failed_runs', 'run', 5982)]],
    // A failed run is not the app's state: the same app is not the same problem.
    ["ours is about the run's app, not the run", failure, runItem, [reportedBy('app_state', 'app', 3)]],
    ["ours is about the URL's app, not the URL", url, urlItem, [reportedBy('backups', 'app', 3)]],
    ['ours is about a run of the app, not the app', app, appItem, [reportedBy('failed_runs', 'run', 3)]],
    ["only the dashboard's own alert is about it", failure, runItem, [reportedBy('attention', 'attention', 5981)]],
  ])('%s: it still alerts, after waiting for our checks', (_what, where, item, reported) => {
    const result = detect(where, item, reported);
    expect(result.folded).toBeUndefined();
    expect(result.incomplete).toEqual([]);
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]?.holdForMs).toBe(WAIT);
  });

  it('an item that names no record cannot be matched: it alerts at once', () => {
    const result = detect(failure, { message: 'the build farm is slow' }, [reportedBy('failed_runs', 'run', 1)]);
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]?.holdForMs).toBeUndefined();
  });

  it('with fold_wait 0s an unmatched item alerts at once, and a matched one is still folded', () => {
    expect(detect(failure, runItem, [], 0).findings[0]?.holdForMs).toBeUndefined();
    expect(detect(failure, runItem, [reportedBy('failed_runs', 'run', 5981)], 0).findings).toEqual([]);
  });

  it('folds the matched items of a section and keeps the others; a covered section notes no cap', () => {
    const items = [runItem, { ...runItem, id: 5982, run_id: 5982 }];
    const snapshot = {
      ...attentionSnapshot([section({ ...failure, count: 30, items })]),
      reported: [reportedBy('failed_runs', 'run', 5981)],
    };
    const result = attention(snapshot, OPTIONS);
    expect(result.findings.map((f) => f.fingerprint)).toEqual(['attention/failed_run/failure/id/5982']);
    expect(result.incomplete).toEqual(['attention/failed_run/', 'attention/failed_run/failure/id/5981']);
  });
});

/** One item of `rule`, detected with `reporting` as the checks that run. */
function judge(rule: string, reporting: readonly string[] | undefined, reportedByRule?: Record<string, string[]>) {
  const where = { rule, kind: 'failure', label: rule } as const;
  const snapshot = {
    ...attentionSnapshot([section({ ...where, count: 25, items: [runItem] })]),
    ...(reporting ? { reporting } : {}),
  };
  return attention(snapshot, { ...OPTIONS, reported_by: reportedByRule ?? {} });
}

describe('which items wait for our checks (reported_by)', () => {
  const all = ['failed_runs', 'stuck_runs', 'certificates', 'url_checks', 'backups', 'maintenance', 'app_state'];
  it.each<[string, string, readonly string[] | undefined, Record<string, string[]> | undefined, boolean]>([
    // [what, rule, checks running, reported_by from the config, waits]
    ['a failed run, failed_runs on', 'failed_run', all, undefined, true],
    ['a failed run, failed_runs off', 'failed_run', ['certificates'], undefined, false],
    ['an expired certificate, certificates on', 'certificate_expired', all, undefined, true],
    ['an expiring certificate, certificates off', 'certificate_expiring', ['failed_runs'], undefined, false],
    ['a URL not answering as its app, url_checks on', 'public_check_failed', all, undefined, true],
    ['an old backup, backups on', 'backup_critical', all, undefined, true],
    ['an unverified backup, backups on', 'backup_unverified', all, undefined, true],
    ['a failed off-site copy, backups off', 'offsite_failed', ['failed_runs'], undefined, false],
    ['an app in maintenance, maintenance on', 'maintenance', all, undefined, true],
    ['a rule no check of ours covers ("Apps not answering")', 'app_not_answering', all, undefined, false],
    ["a service's own rule, listed in reported_by", 'deploy_failed', all, { deploy_failed: ['failed_runs'] }, true],
    ["a service's own rule, its check off", 'deploy_failed', ['backups'], { deploy_failed: ['failed_runs'] }, false],
    ['a default rule unlisted by the config ([])', 'failed_run', all, { failed_run: [] }, false],
    ['the checks running unknown (a direct call): all count', 'failed_run', undefined, undefined, true],
  ])('%s: waits %s', (_what, rule, reporting, reportedByRule, waits) => {
    const result = judge(rule, reporting, reportedByRule);
    const [item, ...rest] = result.findings;
    expect(item?.holdForMs).toBe(waits ? WAIT : undefined);
    if (waits)
      expect(item?.holdReason).toMatch(
        /^waiting up to 20m \(checks\.attention\.fold_wait\) for .+ to report run 5981$/,
      );
    // A capped section notes its cap only where no check of ours reports what it leaves out.
    expect(rest.map((f) => f.fingerprint)).toEqual(waits ? [] : [`attention/${rule}/more`]);
    expect(result.incomplete).toContain(`attention/${rule}/`);
  });
});
