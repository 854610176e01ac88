/**
 * backups: per app, five independent problems, each with its own fingerprint so each resolves on
 * its own:
 * - `stale`:      no backup that finished well, or the newest such is older than `max_age` for the
 *   app's environment
 * - `failed`:     the newest backup that finished (newest not running) failed
 * - `health`:     the service's own `backup_health` is warning or critical
 * - `unverified`: the newest backup that finished well was not checked after it was made (with
 *   `require_verified`)
 * - `offsite/<storage>`: an off-site copy of the newest backup that finished well whose last
 *   transfer failed, that is no longer on its storage, or whose upload has not ended
 *   `offsite_upload_timeout` after the backup was taken (no `uploaded_at`, no error)
 * - `no_offsite`: the newest backup that finished well has no off-site copy at all
 *   (`offsite_required`): one disk away from having no backup
 * - `lost`: the newest backup that finished well is kept nowhere: no longer on the server
 *   (`on_server` false: "only off-site copies are left", reference §2) and on none of its
 *   off-site storages. Nothing to restore it from: critical in production, as a failed one
 * - `size`: the newest backup that finished well is empty (`size_mb` 0: critical in production, as
 *   a failed one), or under `size_drop` (default 0.5) of the median size of the `size_history`
 *   (default 4) good backups before it (a warning: something was left out, or the data was lost)
 *
 * Only a backup whose `state` is one of the succeeded words and whose format is full
 * (`full_formats`, default `zip`; a null format counts as full, see `BackupStates.full_formats`)
 * counts as taken: a running backup (the one our own `apps.backup` remediation starts), a failed
 * one, one in an unknown state, or a `dump` (the database alone: reference §4, `apps.backup`)
 * neither clears a stale alert nor is judged for verification, size or copies. A stale alert whose
 * newest backup is such a dump says so. The app's `last_backup_at` is not evidence
 * of a good backup either: the reference does not say which backups set it (the collector uses it
 * only as a hint of which apps have any backup to wait for).
 *
 * `max_age` also decides whether an app's backups are watched at all: `off` (null) means "backups
 * there are not watched", and none of the problems is reported — an operator who writes
 * `development: off` does not want development's backup health either. Apps outside any
 * environment (environment_type null) are not watched: `max_age` names environment types only, and
 * such apps are scratch and service instances that usually carry no backup policy.
 *
 * When the collector could not tell a judgement ({@link BackupsSeen} `stopped`), the problems it is
 * about are declared incomplete: their alerts stay as they are, neither raised nor resolved.
 */
import { z } from 'zod';
import { environmentTypeSchema, type OffsiteCopy } from '../api/schemas.js';
import { backupOutcome, isFull, type BackupStates } from '../collectors/backups-seen.js';
import type { NewestBackup } from '../collectors/views.js';
import type { AppBackups, BackupsSeen, BackupsSnapshot } from '../collectors/snapshot.js';
import { enabledSchema, stateListSchema } from '../config/check-config.js';
import { DURATION_HINT, offOr, offOrDurationSchema } from '../config/duration.js';
import { addProblem } from '../config/schema-blocks.js';
import {
  FAILED_BACKUP_STATES,
  FAILED_OFFSITE_STATES,
  RUNNING_BACKUP_STATES,
  SUCCEEDED_BACKUP_STATES,
} from '../config/state-words.js';
import { appContext } from './app-context.js';
import { knownValues } from './build-labels.js';
import { appFinding } from './app-finding.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck, type ResolvedAlert } from './define-check.js';
import type { DetectorResult } from './detector-result.js';
import { productionCritical } from './environment-severity.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { formatDuration } from '../lib/format-duration.js';
import { formatUtc } from '../lib/format-utc.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { parseTime, toIso } from '../lib/parse-time.js';

/** `checks.backups`. */
export const backupsConfig = z
  .strictObject({
    enabled: enabledSchema,
    max_age: z
      .partialRecord(environmentTypeSchema, offOrDurationSchema)
      .prefault({})
      // Environment types left out keep their default, so `{ production: 12h }` changes one.
      .transform((given) => ({ production: 26 * 3_600_000, staging: 8 * 86_400_000, development: null, ...given }))
      .describe(
        `Oldest acceptable successful backup per environment type: ${DURATION_HINT}, or "off". Defaults: production 26h, staging 8d, development off.`,
      ),
    succeeded_states: stateListSchema(SUCCEEDED_BACKUP_STATES).describe(
      'Backup states that mean the backup finished well: only such a backup (with a time) counts as taken. A backup whose state is null or in none of the three lists counts as neither taken nor failed.',
    ),
    running_states: stateListSchema(RUNNING_BACKUP_STATES).describe(
      'Backup states that mean the backup is still being made.',
    ),
    failed_states: stateListSchema(FAILED_BACKUP_STATES).describe('Backup states that mean the backup failed.'),
    require_verified: z
      .boolean()
      .default(true)
      .describe('A backup counts only once verified (judged on the newest successful backup).'),
    offsite: z.boolean().default(true).describe('Alert when the off-site copy of the newest successful backup failed.'),
    offsite_failed_states: stateListSchema(FAILED_OFFSITE_STATES).describe(
      'Off-site copy states that mean its last transfer failed (a copy with an `error` text counts as failed whatever its state).',
    ),
    offsite_required: z
      .boolean()
      .default(true)
      .describe('Alert when the newest successful backup has no off-site copy at all (with offsite).'),
    offsite_upload_timeout: offOrDurationSchema
      .prefault('6h')
      .describe(
        'Alert when an off-site copy of the newest successful backup has no uploaded_at (and no error) this long after the backup was taken; "off": never (with offsite).',
      ),
    full_formats: z
      .array(z.string().min(1, 'must not be empty'))
      .min(1, 'must list at least one format')
      .default(['zip'])
      .describe(
        'Backup formats that count as a full backup: only such a backup counts as taken (a dump is the database alone). A backup whose format is null counts as full.',
      ),
    size_drop: offOr(z.number().gt(0).lt(1), 'a share between 0 and 1')
      .default(0.5)
      .describe(
        'Alert when the newest successful backup is smaller than this share of the median size of the successful backups before it; "off": never (an empty backup is alerted whatever this says).',
      ),
    size_history: z
      .number()
      .int()
      .min(2)
      .max(20)
      .default(4)
      .describe(
        'How many successful backups before the newest one its size is compared with (each is read: more backups per app per cycle).',
      ),
  })
  .superRefine((b, ctx) => {
    // One word in two lists would make a backup both taken and failed (or still running).
    const lists = ['succeeded_states', 'running_states', 'failed_states'] as const;
    for (const [i, list] of lists.entries()) {
      for (const other of lists.slice(i + 1)) {
        const both = b[list].filter((state) => b[other].includes(state));
        if (both.length > 0)
          addProblem(ctx, [other], `"${both.join('", "')}" is also in ${list}: a state can be in one list only`);
      }
    }
  })
  .prefault({});

/**
 * `checks.backups` as parsed: the detector's options. Severity by default: critical in production,
 * warning elsewhere (of a missing, stale or failed backup).
 */
export type BackupsConfig = z.output<typeof backupsConfig>;

/** The backups check. */
export const backupsCheck = defineCheck({
  name: 'backups',
  job: 'backups',
  config: backupsConfig,
  detect: backups,
  relevant: backupsConcern,
  resolution: backupsResolution,
  stateLists: { record: 'backup', fields: ['succeeded_states', 'running_states', 'failed_states'] },
  presentation: {
    noun: ['backup problem', 'backup problems'],
    facts: factsFrom([
      'age',
      'max_age',
      'newest_backup',
      'backup',
      ['backup_health', 'Health'],
      ['last_backup_at', 'Last backup', 'time'],
      ['taken_at', 'Taken', 'time'],
      'verified',
      'storage',
      ['state', 'Copy state'],
      'error',
      ['uploaded_at', 'Uploaded', 'time'],
      'size',
      'usual_size',
    ]),
    nextStep: ({ labels }) => NEXT_STEPS[labels.problem as BackupProblem] ?? null,
  },
});

/** Which of an app's backup problems a finding is. */
export type BackupProblem = 'stale' | 'failed' | 'health' | 'unverified' | 'offsite' | 'no_offsite' | 'lost' | 'size';

/** What to do next about each problem (the `problem` label of a finding). */
const NEXT_STEPS: Record<BackupProblem, string> = {
  stale: "Take a backup now, then find why the scheduled one did not succeed (the backup run's log).",
  failed: "Read the failed backup's log, fix the cause, then take a backup now.",
  health:
    "See the app's backups on the platform for why the service rates them so; a successful backup usually clears it.",
  unverified: 'Verify the newest backup: restore it somewhere other than production.',
  offsite: "Upload the copy again, and check the off-site storage's credentials and free space.",
  no_offsite: "Configure the app's off-site storage on the platform, then upload the newest backup there.",
  lost: "Take a backup now, then find why the server's copy went before an off-site copy was stored (the copies' errors).",
  size: "Open the backup: check what it holds against the app's data (a filestore or database left out, data lost), then take a backup now.",
};

/** Why an off-site copy is a finding. */
export type OffsiteReason = 'transfer_failed' | 'not_on_storage' | 'upload_stuck';

/**
 * Why an off-site copy is a problem, or null. A copy with `on_storage` false that was never
 * uploaded (no `uploaded_at`, no error, no failed state) is an upload still under way, not a copy
 * that is "no longer" there; it is stuck once `uploadTimeoutMs` have passed since the backup was
 * taken (`takenAt`).
 */
export function judgeOffsite(
  copy: OffsiteCopy,
  failedStates: readonly string[],
  upload: { takenAt: number; now: number; uploadTimeoutMs: number | null } | null = null,
): OffsiteReason | null {
  if (copy.error !== null || (copy.state !== null && failedStates.includes(copy.state))) return 'transfer_failed';
  if (!copy.on_storage && copy.uploaded_at !== null) return 'not_on_storage';
  const timeout = upload?.uploadTimeoutMs ?? null;
  const stuck = copy.uploaded_at === null && upload && timeout !== null && upload.now - upload.takenAt > timeout;
  return stuck ? 'upload_stuck' : null;
}

/**
 * Whether the detector finds anything about this app, or cannot tell: judged by the detector
 * itself on a snapshot of the one app (every finding is about one app), so the collector keeps
 * exactly the apps it would report and drops the others, with their backups, as it settles them.
 */
export function backupsConcern({ app, seen }: AppBackups, options: BackupsConfig, now: number): boolean {
  const one: BackupsSnapshot = {
    job: 'backups',
    takenAt: now,
    apps: [app],
    backups: new Map(seen ? [[app.id, seen]] : []),
  };
  const result = backups(one, options, now);
  return result.findings.length > 0 || result.incomplete.length > 0;
}

/**
 * Why a backup problem is over, read in the snapshot that resolved it: the backup that now stands
 * ("backup shop-20261124.zip taken 2026-11-24 08:00 UTC, verified"), or the app's health now.
 */
function backupsResolution(alert: ResolvedAlert, snapshot: BackupsSnapshot): string | null {
  const { subject } = alert;
  if (subject?.id === undefined) return null;
  let seen: BackupsSeen | undefined;
  if (subject.type === 'app') seen = snapshot.backups.get(subject.id);
  else if (subject.type === 'backup') {
    // An unverified or off-site alert names the backup it judged; a newer good one may stand now.
    for (const s of snapshot.backups.values()) if (s.good?.id === subject.id || s.finished?.id === subject.id) seen = s;
    // A newer good backup has replaced it: the app, by the labels every finding about it carries.
    const app = snapshot.apps.find((a) => a.name === alert.labels.app && a.namespace === alert.labels.namespace);
    if (!seen && app) seen = snapshot.backups.get(app.id);
  }
  const problem = alert.labels.problem as BackupProblem | undefined;
  if (problem === 'health')
    return recordResolution(alert, 'app', snapshot.apps, (app) => `backup health is ${app.backup_health} now`);
  const good = seen?.good;
  if (!good) return null;
  const taken = parseTime(good.taken_at);
  const when = taken === null ? '' : ` taken ${formatUtc(taken, 'reading')}`;
  const verified = good.verified ? ', verified' : '';
  if (problem === 'offsite' || problem === 'no_offsite') return `backup ${good.name}${when}: off-site copies stored`;
  if (problem === 'size') return `backup ${good.name}${when}: ${sizeText(good.size_mb)}`;
  return `backup ${good.name}${when}${verified}`;
}

/** Finds backup problems of every watched app. */
export function backups(
  snapshot: BackupsSnapshot,
  options: BackupsConfig,
  now: number,
): DetectorResult<Detection<'backups'>> {
  const findings: Detection<'backups'>[] = [];
  const incomplete: string[] = [];
  for (const app of snapshot.apps) {
    // `max_age` names environment types only: an app outside any environment is not watched.
    const maxAge = app.environment_type === null ? null : options.max_age[app.environment_type];
    if (maxAge === null) continue;
    const seen = snapshot.backups.get(app.id);
    const { name } = appContext(app);
    // Every finding of this app: same labels and link; the fingerprint names the sub-problem. As a
    // prefix of `incomplete`, a problem's fingerprint matches only itself (no sub-problem's name
    // starts with another's), and `offsite/` every storage's.
    const fp = (problem: BackupProblem, ...storage: string[]) =>
      fingerprint('backups', 'app', app.id, problem, ...storage);
    // A finding about the app, or about one `backup` of it: then its details lead, and it names its
    // app too (remediation's apps.backup changes the app).
    const make = (
      problem: BackupProblem,
      backup: NewestBackup | null,
      f: Pick<Detection<'backups'>, 'severity' | 'summary' | 'since'> & {
        details?: Record<string, string>;
        storage?: string;
      },
    ): Detection<'backups'> => ({
      ...appFinding('backups', app, f.severity, { problem, storage: f.storage }),
      fingerprint: f.storage === undefined ? fp(problem) : fp(problem, f.storage),
      summary: oneLine(f.summary),
      details: backup ? { ...backupDetails(name, backup), ...f.details, app_id: String(app.id) } : f.details!,
      since: f.since,
      ...(backup && { subject: { type: 'backup', id: backup.id } }),
    });
    // A failed backup shares the stale table: in production it means the next stale alert is
    // coming unless someone acts before the deadline, so it is as urgent; elsewhere a warning.
    const severity = productionCritical(app.environment_type);
    const good = seen?.good;

    // stale / missing: judged on the newest good backup only.
    if (good === undefined && seen?.stopped === 'bound') {
      incomplete.push(fp('stale'));
    } else {
      const stale = staleFinding(name, seen, maxAge, now, options);
      if (stale) findings.push(make('stale', null, { severity, ...stale }));
    }

    // failed: the newest finished backup failed; a running one on top of it changes nothing, and
    // only a newer good one resolves it.
    const finished = seen?.finished;
    if (finished && backupOutcome(finished, options) === 'failed') {
      const details: Record<string, string> = { backup_state: finished.state ?? 'none' };
      if (good) details.newest_successful_backup = `${good.name} (#${good.id}), taken ${ago(good, now)}`;
      const summary = `Newest finished backup of ${name} failed: ${finished.name} (#${finished.id}, ${finished.state}, taken ${ago(finished, now)})`;
      findings.push(make('failed', finished, { severity, summary, details, since: toIso(finished.taken_at) }));
    } else if (finished === undefined && seen?.stopped === 'bound') {
      incomplete.push(fp('failed'));
    }

    // health: the service's own judgement, warning or critical as ours (healthy and none are none).
    const health = app.backup_health;
    if (health === 'warning' || health === 'critical') {
      findings.push(
        make('health', null, {
          severity: health,
          summary: `Backup health of ${name} is ${app.backup_health}`,
          details: { app: name, backup_health: app.backup_health, last_backup_at: toIso(app.last_backup_at) ?? 'none' },
          since: null,
        }),
      );
    }

    // Verification and off-site copies: of the newest good backup. When the read stopped before
    // finding it, what it would say is unknown.
    if (!good) {
      if (seen?.stopped) incomplete.push(fp('unverified'), fp('offsite', ''), fp('no_offsite'), fp('lost'), fp('size'));
      continue;
    }
    // Only for a finding: most apps have none (`backupsConcern` asks of every app).
    const takenAt = () => toIso(good.taken_at);
    const size = sizeFinding(name, good, seen?.previous ?? [], options.size_drop);
    if (size) {
      findings.push(make('size', good, { ...size, severity: size.empty ? severity : 'warning', since: takenAt() }));
    }

    // Off the server and on no storage: whatever the off-site settings, nothing is left to restore.
    if (!good.on_server && !good.offsite.some((copy) => copy.on_storage)) {
      const summary = `Newest successful backup of ${name} is kept nowhere: not on the server, on no off-site storage (${good.name})`;
      findings.push(make('lost', good, { severity, summary, since: null }));
    }

    if (options.require_verified && !good.verified) {
      const summary = `Newest successful backup of ${name} is not verified (${good.name})`;
      findings.push(make('unverified', good, { severity: 'warning', summary, since: takenAt() }));
    }

    if (!options.offsite) continue;
    if (good.offsite.length === 0 && options.offsite_required) {
      const summary = `Newest successful backup of ${name} has no off-site copy (${good.name})`;
      findings.push(make('no_offsite', good, { severity: 'warning', summary, since: null }));
    }
    // A good backup always has a time (`backupOutcome`).
    const upload = { takenAt: parseTime(good.taken_at)!, now, uploadTimeoutMs: options.offsite_upload_timeout };
    for (const copy of good.offsite) {
      const reason = judgeOffsite(copy, options.offsite_failed_states, upload);
      if (!reason) continue;
      const { storage } = copy;
      const details = { storage, ...copyDetails(copy), reason };
      const summary =
        reason === 'transfer_failed'
          ? `Off-site copy of the newest successful backup of ${name} on ${storage} failed${copy.error ? `: ${copy.error}` : ''}`
          : reason === 'upload_stuck'
            ? `Off-site copy of the newest successful backup of ${name} on ${storage} is not uploaded ${formatDuration(now - upload.takenAt)} after the backup`
            : `Off-site copy of the newest successful backup of ${name} is no longer on ${storage}`;
      findings.push(make('offsite', good, { severity: 'warning', summary, details, since: null, storage }));
    }
  }
  return { findings, incomplete };
}

/**
 * The stale finding's text, or null when the newest good backup is young enough. It says what is
 * known: the newest good backup's age, or that there is none (within max_age, when the read
 * stopped there), and the newest backup when that is another one (failed, running, unknown).
 */
function staleFinding(
  name: string,
  seen: BackupsSeen | undefined,
  maxAge: number,
  now: number,
  states: BackupStates,
): Pick<Detection<'backups'>, 'summary' | 'details' | 'since'> | null {
  // A good backup always has a time (`backupOutcome`). Asked first: every app fine is asked (`backupsConcern`).
  const taken = seen?.good ? parseTime(seen.good.taken_at)! : undefined;
  if (taken !== undefined && now - taken <= maxAge) return null;
  const max = formatDuration(maxAge);
  if (!seen)
    return {
      summary: `${name} has no backup`,
      details: { app: name, max_age: max, newest_backup: 'none' },
      since: null,
    };
  const { good, newest } = seen;
  const details: Record<string, string> = { app: name, max_age: max };
  let summary: string;
  let since: string | null = null;
  if (good && taken !== undefined) {
    Object.assign(details, {
      age: formatDuration(now - taken),
      taken_at: new Date(taken).toISOString(),
      backup: `${good.name} (#${good.id})`,
    });
    summary = `No successful backup of ${name} for ${formatDuration(now - taken)} (max ${max})`;
    since = new Date(taken + maxAge).toISOString();
  } else if (seen.stopped === 'max_age') {
    details.backup = `none within ${max}`;
    summary = `No successful backup of ${name} within ${max}`;
  } else {
    details.backup = 'none';
    summary = `${name} has no successful backup`;
  }
  if (newest !== good) {
    details.newest_backup = `${newest.name} (#${newest.id}): ${newest.state ?? '(no state)'}, taken ${ago(newest, now)}`;
    summary += `; newest: #${newest.id} ${newest.state ?? '(no state)'} ${ago(newest, now)}`;
    // A word the config does not name is most likely the service's own word for "done": say where
    // it goes, in the alert the operator is reading, rather than only "no successful backup".
    const word = newest.state;
    if (word !== null && states.succeeded_states.includes(word) && !isFull(newest, states)) {
      details.newest_backup_format = `"${newest.format}" is not in checks.backups.full_formats: not a full backup`;
      summary += ` (format ${newest.format}: not a full backup)`;
    } else if (
      word !== null &&
      ![...states.succeeded_states, ...states.running_states, ...states.failed_states].includes(word)
    ) {
      details.unknown_state = `"${word}" is in none of checks.backups.succeeded_states, running_states or failed_states`;
      summary += ` (a state checks.backups does not name)`;
    }
  }
  return { summary, details, since };
}

/**
 * The size finding's text, or null: an empty backup (`size_mb` 0) always; one under `dropRatio`
 * (`size_drop`; null: off) of the median size of the good backups before it, when at least two of
 * them give a size.
 */
function sizeFinding(
  name: string,
  good: NewestBackup,
  previous: readonly { size_mb: number | null }[],
  dropRatio: number | null,
): { empty: boolean; summary: string; details: Record<string, string> } | null {
  const mb = good.size_mb;
  if (mb === null) return null;
  if (mb === 0)
    return {
      empty: true,
      summary: `Newest successful backup of ${name} is empty: ${good.name} (0 MB)`,
      details: { size: sizeText(0), reason: 'empty' },
    };
  const sizes = previous.map((p) => p.size_mb).filter((size) => size !== null);
  // No larger than the largest: most apps are told apart from it without sorting.
  if (dropRatio === null || sizes.length < 2 || mb >= dropRatio * Math.max(...sizes)) return null;
  const usual = median(sizes);
  if (mb >= dropRatio * usual) return null;
  const share = Math.round((mb / usual) * 100);
  return {
    empty: false,
    summary: `Newest successful backup of ${name} shrank to ${share}% of its usual size: ${good.name} (${sizeText(mb)}, usually ${sizeText(usual)})`,
    details: {
      size: sizeText(mb),
      usual_size: `${sizeText(usual)} (median of the ${sizes.length} successful backups before it)`,
      reason: 'shrunk',
    },
  };
}

/** The middle of `values` (at least one), the mean of the two middle ones for an even count. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** "812.5 MB". */
function sizeText(mb: number | null): string {
  return mb === null ? 'size unknown' : `${Math.round(mb * 10) / 10} MB`;
}

/** "3h ago", or "at an unknown time". */
function ago(backup: NewestBackup, now: number): string {
  const at = parseTime(backup.taken_at);
  return at === null ? 'at an unknown time' : `${formatDuration(now - at)} ago`;
}

function backupDetails(name: string, backup: NewestBackup): Record<string, string> {
  const taken = knownValues({ taken_at: toIso(backup.taken_at) });
  return { app: name, backup: `${backup.name} (#${backup.id})`, ...taken, verified: backup.verified ? 'yes' : 'no' };
}

function copyDetails({ on_storage, state, error, uploaded_at }: OffsiteCopy): Record<string, string> {
  return { on_storage: on_storage ? 'yes' : 'no', ...knownValues({ state, error, uploaded_at: toIso(uploaded_at) }) };
}
