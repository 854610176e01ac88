/**
 * attention: the service's own dashboard ("needs attention"), one finding per listed item.
 *
 * Item shapes are not given by the reference (only that `kind` decides them), so items are read as
 * open records: an item is identified by its `id` where it has one, else by a hash of its content
 * (sorted-key JSON, so key order does not matter); the fields a label knows (namespace, app, …) are
 * used when present and everything else goes into the details.
 *
 * The service lists at most 20 items per section. When a section's `count` is larger, one extra
 * finding per section says how many there are in all (fingerprint `attention/<rule>/more`): an ops
 * person sees "Failed backups: 57 in all, 20 listed" once, instead of the same note on twenty
 * alerts; it resolves by itself when the section fits again. Each item also carries the section's
 * total in its details.
 *
 * A truncated section is not a complete view of its rule: an item that drops out of the listed 20
 * (because newer ones pushed it out) is still a problem. So the detector declares such a section
 * incomplete (`attention/<rule>/`), and the lifecycle leaves that rule's unlisted alerts as they
 * are instead of resolving them; they resolve once the section lists every item again.
 *
 * One problem, one alert: the dashboard lists many problems the daemon's own checks report too (a
 * failed run is a `failed_runs` alert and an item of the service's failed-runs section). An item
 * that names a record (by its section's kind: a failure its run, a URL item its URL, an app item
 * its app and the backup it names) that an open alert of another check is about is folded into that
 * alert: no finding of its own, with the reason named for the cycle's log ({@link FoldedFinding}).
 * The other alert already says it, in our words and with our severity for its environment; adding
 * the item's text to it would make the attention job rewrite another job's alert (and re-announce
 * it whenever the dashboard's wording changed), so the item is left out instead.
 *
 * An item about a record our own alert reports LATER (the item fired first) becomes part of that
 * alert: the detector folds it from then on, and the lifecycle closes the item's own alert quietly
 * (resolved, "folded into …", sent to no channel but those that keep a message per alert), or forgets
 * it without a word while it was still pending. One page for one problem.
 *
 * Our checks run on their own schedules (runs every minute, URLs every quarter hour), so the
 * dashboard can list a problem before they report it. An item of a rule one of our ENABLED checks
 * could report (`reported_by`: rule → checks, defaults for the simulator's rules, since the
 * reference shows neither rule names nor item shapes) that names a record none of our alerts is
 * about yet waits `fold_wait` (held by the lifecycle, `holdForMs`, with its reason) before it fires
 * on its own, which gives them the time to. Every other item fires in the cycle it appears: a rule
 * no check of ours covers ("Apps not answering"), a rule whose checks are all off, an item naming
 * no record (nothing to match it by).
 *
 * A truncated section of a rule our checks cover raises no "N in all, 20 listed" alert: what the
 * dashboard does not list there, our checks report. The collector widens the window where it can
 * (one read per namespace, each listing its own first 20).
 */
import { z } from 'zod';
import type { AttentionItem, AttentionSection } from '../api/schemas.js';
import type { AttentionSnapshot } from '../collectors/snapshot.js';
import { checkConfig, wordListSchema } from '../config/check-config.js';
import { SEVERITY_RANK, type Fact, type Severity } from '../lib/alert-vocabulary.js';
import { buildLabels, type LabelValue } from './build-labels.js';
import { defineCheck } from './define-check.js';
import { subjectKey, type OpenSubject } from '../lib/alert-vocabulary.js';
import { durationSchema } from '../config/duration.js';
import type { DetectorResult, FoldedFinding } from './detector-result.js';
import type { Detection } from './finding.js';
import { contentHash, fingerprint, stableJson } from './fingerprint.js';
import { keyInWords } from './key-in-words.js';
import { oneLine } from './one-line.js';
import type { Presentable } from './presentation.js';
import { toIso } from '../lib/parse-time.js';
import { formatDuration } from '../lib/format-duration.js';
import { ownValue } from '../lib/own-value.js';

/**
 * The simulator's rules (`packages/simulator/src/problem-finder.ts`) and the checks of ours that report the
 * same problems. The reference names no rule, so a service's own names go in `reported_by`.
 */
export const DEFAULT_REPORTED_BY: Readonly<Record<string, readonly string[]>> = {
  failed_run: ['failed_runs'],
  retrying_run: ['failed_runs'],
  certificate_expired: ['certificates'],
  certificate_expiring: ['certificates'],
  public_check_failed: ['url_checks'],
  backup_critical: ['backups'],
  backup_stale: ['backups'],
  backup_unverified: ['backups'],
  offsite_failed: ['backups'],
  maintenance: ['maintenance'],
};

/** The dashboard's severities as ours. */
const SEVERITY: Record<AttentionSection['severity'], Severity> = {
  danger: 'critical',
  warning: 'warning',
  info: 'info',
};

/** `checks.attention`. */
export const attentionConfig = checkConfig({
  min_severity: z
    .enum(['info', 'warning', 'danger'])
    .default('warning')
    .describe('Lowest attention item severity reported.'),
  ignore_rules: wordListSchema([]).describe(
    "Attention sections left out entirely, by the service's rule name (a section's `rule`, the alerts' `rule` label). Empty by default: an item about a run, URL, app or backup that one of the watchdog's own checks already reports is folded into that alert anyway, so there is nothing to list against duplicates; list a rule only to never hear of it.",
  ),
  fold_wait: durationSchema
    .prefault('20m')
    .describe(
      "How long an item naming a run, URL, app or backup, of a rule one of the watchdog's own enabled checks could report (`reported_by`), waits for that check to report the same record (and take it into its alert) before it alerts on its own. Our checks run on their own schedules (URLs every 15m by default); 0s alerts at once. Items of any other rule alert at once.",
    ),
  reported_by: z
    .record(z.string().min(1, 'must not be empty'), z.array(z.string().min(1, 'must not be empty')))
    .default({})
    .describe(
      "Which of the watchdog's own checks report the problems of each attention rule (a section's `rule`), added to the defaults for the simulator's rules (failed_run: [failed_runs], certificate_expired: [certificates], public_check_failed: [url_checks], backup_*: [backups], maintenance: [maintenance], …). An item of a rule none of whose checks is enabled alerts at once; `[]` says no check of ours covers a rule. The reference does not name the rules: list your service's here.",
    ),
});

/** The attention check. */
export const attentionCheck = defineCheck({
  name: 'attention',
  job: 'attention',
  config: attentionConfig,
  detect: attention,
  resolution: () => 'the service no longer lists it among the things needing attention',
  presentation: {
    noun: ['item needing attention', 'items needing attention'],
    facts: itemFacts,
    nextStep: () => "Open the item in the platform's attention summary: it says what the service wants done.",
  },
});

/** `checks.attention` as parsed: the detector's options. */
export type AttentionConfig = z.output<typeof attentionConfig>;

/** Item fields copied to labels when present (as text). */
const LABEL_FIELDS = ['namespace', 'project', 'environment_type', 'app', 'server', 'workflow', 'action'] as const;

/** Item fields that can name an item in a summary, best first. */
const NAME_FIELDS = ['name', 'app', 'url', 'record', 'title'] as const;

/**
 * Item fields that say what is wrong with it. Not `state`: an app item's state ("running") would
 * read as the problem.
 */
const REASON_FIELDS = ['reason', 'message', 'error'] as const;

/** A field of an item as label or summary text: strings and finite numbers only. */
function text(item: AttentionItem, key: string): string | null {
  const value = item[key];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** The item's identity: its own `id`, else a hash of its content. */
function identity(item: AttentionItem): ['id' | 'hash', string] {
  const id = text(item, 'id');
  return id !== null ? ['id', id] : ['hash', contentHash(item)];
}

/**
 * The records an item names, as `type:id` keys of alert subjects, by its section's kind (the
 * reference says only that the kind decides the shape): a failure its run, a URL item its URL, an
 * app item its app and the backup it names. The `…_id` field wins over `id`, which is the record's
 * own id in the simulator's shapes and may be another's in a service's. None: nothing to match by.
 */
function recordsOf(kind: AttentionSection['kind'], item: AttentionItem): string[] {
  const keyed = (type: string, ...fields: string[]) => {
    const id = fields.map((f) => text(item, f)).find((v) => v !== null);
    return id === undefined ? [] : [`${type}:${id}`];
  };
  switch (kind) {
    case 'failure':
      return keyed('run', 'run_id', 'id');
    case 'url':
      return keyed('url', 'url_id', 'id');
    case 'app':
      return [...keyed('app', 'app_id', 'id'), ...keyed('backup', 'backup_id')];
  }
}

/** The records our other checks' open alerts are about, by `type:id`, with who reports each. */
function reportedRecords(reported: readonly OpenSubject[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const { check, subject } of reported ?? []) {
    if (subject.id === undefined || check === 'attention') continue;
    const key = subjectKey(subject);
    if (!out.has(key)) out.set(key, `${check} (${subject.type} ${subject.id})`);
  }
  return out;
}

/** A short description of an item for the summary line. */
function describe(item: AttentionItem): string {
  const name = NAME_FIELDS.map((k) => text(item, k)).find((v) => v !== null);
  const env = text(item, 'environment_type');
  const reason = REASON_FIELDS.map((k) => text(item, k)).find((v) => v !== null);
  const id = text(item, 'id');
  let out = name ?? (id !== null ? `#${id}` : truncate(stableJson(item), 120));
  if (env) out += ` (${env})`;
  if (reason) out += `: ${reason}`;
  return out;
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/**
 * The enabled checks of ours that could report the items of a rule: its `reported_by` entry (absent:
 * the defaults) among the checks running (`reporting`; absent: all of them).
 */
export function coveringChecks(
  rule: string,
  options: Pick<AttentionConfig, 'reported_by'>,
  reporting: readonly string[] | undefined,
): readonly string[] {
  // The rule is the service's word: own keys only.
  const checks = ownValue(options.reported_by, rule) ?? ownValue(DEFAULT_REPORTED_BY, rule) ?? [];
  return reporting === undefined ? checks : checks.filter((c) => reporting.includes(c));
}

/** The hold of an item waiting for `checks` to report `records`, and the reason the console shows. */
function foldHold(waitMs: number, checks: readonly string[], records: readonly string[]) {
  const who = checks.join(' or ');
  const what = records.map((r) => r.replace(':', ' ')).join(', ');
  return {
    holdForMs: waitMs,
    holdReason: `waiting up to ${formatDuration(waitMs, 'exact')} (checks.attention.fold_wait) for ${who} to report ${what}`,
  };
}

/**
 * Finds every listed item of every section at least as severe as `min_severity` and not of an
 * ignored rule, but the items our other checks' open alerts report (folded into them), and declares
 * the sections that list fewer items than they count incomplete.
 */
export function attention(
  snapshot: AttentionSnapshot,
  options: AttentionConfig,
): DetectorResult<Detection<'attention'>> {
  const findings: Detection<'attention'>[] = [];
  const incomplete: string[] = [];
  const folded: FoldedFinding[] = [];
  const seen = new Set<string>();
  const reported = reportedRecords(snapshot.reported);
  for (const section of snapshot.summary.sections) {
    const severity = SEVERITY[section.severity];
    if (SEVERITY_RANK[severity] < SEVERITY_RANK[SEVERITY[options.min_severity]]) continue;
    if (options.ignore_rules.includes(section.rule)) continue;
    const truncated = section.count > section.items.length;
    const covering = coveringChecks(section.rule, options, snapshot.reporting);
    const covered = covering.length > 0;
    /** A finding of this section: its rule and kind in every one's labels, with any `more` labels. */
    const sectionFinding = (fp: string, summary: string, details: Record<string, string>, more = {}) => ({
      fingerprint: fp,
      check: 'attention' as const,
      severity,
      summary,
      details,
      labels: buildLabels('attention', { rule: section.rule, kind: section.kind, ...more }),
    });
    // The empty part makes the prefix end in `/`, so rule `cert` does not cover rule `cert_x`.
    if (truncated) incomplete.push(fingerprint('attention', section.rule, ''));

    for (const item of section.items) {
      const [by, key] = identity(item);
      const fp = fingerprint('attention', section.rule, section.kind, by, key);
      // The same item listed twice (or two items with identical content) is one problem.
      if (seen.has(fp)) continue;
      seen.add(fp);

      const records = recordsOf(section.kind, item);
      const reporter = records.map((r) => reported.get(r)).find((who) => who !== undefined);
      if (reporter !== undefined) {
        folded.push({ fingerprint: fp, reason: `reported by ${reporter}`, into: reporter });
        incomplete.push(fp);
        continue;
      }

      const labelValues: Record<string, LabelValue> = { rule: section.rule, kind: section.kind };
      for (const field of LABEL_FIELDS) labelValues[field] = text(item, field);
      // An app item names its app in `name`.
      if (section.kind === 'app') labelValues.app ??= text(item, 'name');

      const details: Record<string, string> = { section: section.label, rule: section.rule };
      if (truncated) details.section_total = `${section.count} in all, ${section.items.length} listed`;
      for (const [field, value] of Object.entries(item)) {
        if (field in details || value === null || value === undefined) continue;
        details[field] = typeof value === 'string' ? value : JSON.stringify(value);
      }

      const url = text(item, 'url');
      const since = text(item, 'since');
      findings.push({
        ...sectionFinding(fp, oneLine(`${section.label}: ${describe(item)}`), details, labelValues),
        url: url && /^https?:\/\//.test(url) ? url : null,
        since: since ? toIso(since) : null,
        subject: typeof item.id === 'number' ? { type: 'attention', id: item.id } : { type: 'attention' },
        // Named records of a covered rule wait for our checks to report them; any other item is news now.
        ...(covered && records.length > 0 && options.fold_wait ? foldHold(options.fold_wait, covering, records) : {}),
      });
    }

    // What a covered section does not list, our checks report: no note of the cap for it.
    if (truncated && !covered) {
      const fp = fingerprint('attention', section.rule, 'more');
      if (seen.has(fp)) continue;
      seen.add(fp);
      const summary = `${section.label}: ${section.count} in all, only ${section.items.length} listed`;
      const count = String(section.count);
      const details = { section: section.label, rule: section.rule, count, listed: String(section.items.length) };
      findings.push({
        ...sectionFinding(fp, summary, details),
        url: null,
        since: null,
        subject: { type: 'attention' },
      });
    }
  }
  return folded.length > 0 ? { findings, incomplete, folded } : { findings, incomplete };
}

/**
 * Details never shown: ids, what the labels and the link already say, the section's own words
 * (the summary starts with the section's label).
 */
const NOT_SHOWN =
  /^(id|.*_id|app|name|namespace|project|environment|environment_type|server|url|since|section|rule|kind|section_total)$/;

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;

/**
 * An item's facts: whatever the service listed (item shapes are the service's own), without ids,
 * labels, the link, and any value the labels or the summary already say; a value that reads as an
 * ISO 8601 time is shown as a time.
 */
function itemFacts({ summary, details, labels }: Presentable): Fact[] {
  const said = new Set([summary, ...Object.values(labels).filter((v): v is string => Boolean(v))]);
  return Object.entries(details)
    .filter(([key, value]) => value !== '' && !NOT_SHOWN.test(key) && !said.has(value))
    .map(([key, value]) => ({ label: keyInWords(key), value, ...(ISO_TIME.test(value) && { kind: 'time' as const }) }));
}
