/**
 * What people are told about an attempt: the notice sent to the alert's channels when an attempt
 * ends (pure, so its wording is unit-tested), and the one alert raised per suspension.
 */
import type { WatcherState } from '../api/schemas.js';
import { formatDuration } from '../lib/format-duration.js';
import type { Finding } from '../detectors/finding.js';
import { presented } from '../detectors/registry.js';
import { fingerprint } from '../detectors/fingerprint.js';
import { keyInWords } from '../detectors/key-in-words.js';
import type { NoticeNotification } from '../notify/channels/channel.js';
import type { ActionWords } from './actions/action.js';
import type { AttemptRow } from './remediation-store.js';
import { readbackText, readbackWord, type BackupReading } from './backup-readback.js';
import { scopeText, type Suspension } from './suspension.js';

/** How an attempt ended. */
export type AttemptOutcome =
  /** The run the change started finished well. */
  | { kind: 'succeeded' }
  /** The run failed (at a step, or on the server's watcher). */
  | { kind: 'run_failed'; step: string | null; reason: string | null; watcher: WatcherState | null }
  /** The run ended in a state that is neither success nor failure (cancelled…). */
  | { kind: 'run_ended'; state: string }
  /** The service said this record cannot be changed this way: stop on it. */
  | { kind: 'stopped'; code: string; message: string }
  /** The run was still going when `follow_timeout` ran out. */
  | { kind: 'follow_timeout'; afterMs: number }
  /** No readable answer came within `follow_timeout`: taken or not, nobody can say. */
  | { kind: 'unanswered'; afterMs: number }
  /** The key was taken earlier, but the run it started could not be found. */
  | { kind: 'unverified' }
  /** The change was taken without a run to follow. */
  | { kind: 'no_run' }
  /** The service refused the request as malformed. */
  | { kind: 'failed_request'; code: string; message: string }
  /** The backup the run took, read back (`backups.get`): verified, copied off-site, or how far it got in `windowMs`. */
  | { kind: 'backup_read'; reading: BackupReading; windowMs: number }
  /** The run succeeded, but the backup it took could not be found or read: why. */
  | { kind: 'backup_unread'; why: string };

/** The short outcome word stored in the attempt and the audit. */
export function outcomeWord(outcome: AttemptOutcome): string {
  if (outcome.kind === 'backup_read') return readbackWord(outcome.reading);
  return outcome.kind === 'stopped' ? outcome.code : outcome.kind;
}

/** Whether the change did what it was for: the run succeeded and, for a backup, it was verified and copied off-site. */
export function outcomeSucceeded(outcome: AttemptOutcome): boolean {
  return outcomeWord(outcome) === 'succeeded';
}

/** One line: "Retried automatically: failed at step install: pip failed". */
export function outcomeTitle(words: ActionWords, outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case 'succeeded':
      return words.succeeded;
    case 'run_failed': {
      const where = outcome.step
        ? ` at step ${outcome.step}`
        : outcome.watcher
          ? ` on the server (watcher ${outcome.watcher})`
          : '';
      return `${words.failed}${where}${outcome.reason ? `: ${outcome.reason}` : ''}`;
    }
    case 'run_ended':
      return `${words.done}: the run ended ${outcome.state}`;
    case 'stopped':
      return `${keyInWords(outcome.code)}: stopped`;
    case 'follow_timeout':
      return `${words.done}: outcome unknown, still running after ${formatDuration(outcome.afterMs, 'exact')}`;
    case 'unanswered':
      return `${words.noun}: no answer from the service in ${formatDuration(outcome.afterMs, 'exact')}; it may or may not have been made`;
    case 'unverified':
      return `${words.noun}: the service said this request was sent before (idempotency_key_reused), but no run shows it was made`;
    case 'no_run':
      return `${words.done}: accepted, no run to follow`;
    case 'failed_request':
      return `${words.noun} refused: ${outcome.code}`;
    case 'backup_read':
      return readbackText(words.succeeded, words.failed, outcome.reading, outcome.windowMs);
    case 'backup_unread':
      return `${words.succeeded}, but the backup cannot be read back: ${outcome.why}`;
  }
}

/** What a notice of an attempt that joined a run already under way says: it followed that run, it did not start it. */
export const JOINED_LINE =
  'The service answered already_running: this run was already under way when deploy-watchdog asked; it followed that run, it did not start it.';

/**
 * The notice for the alert's channels that show progress when an attempt starts: its change sent
 * and accepted ("Automatic retry: sent, following run #5981"). Its outcome follows when it ends.
 */
export function startedNotice(attempt: AttemptRow, words: ActionWords): NoticeNotification {
  const following = attempt.runId !== null ? `following run #${attempt.runId}` : 'looking for its run';
  const joined = attempt.answer === 'already_running';
  return attemptNotice(attempt, {
    title: `${words.noun}: sent, ${joined ? `run #${attempt.runId} was already under way: following it` : following}`,
    severity: 'info',
    fields: [{ label: 'Policy', value: `${attempt.policy} (${attempt.action}, attempt ${attempt.attempt})` }],
    lines: [`Alert: ${attempt.summary}`, ...(joined ? [JOINED_LINE] : [])],
  });
}

/** The notice for the alert's channels when an attempt ends. */
export function outcomeNotice(attempt: AttemptRow, words: ActionWords, outcome: AttemptOutcome): NoticeNotification {
  const labels = attempt.labels;
  const fields: { label: string; value: string }[] = [];
  const where = [labels.app, labels.environment_type && `(${labels.environment_type})`].filter(Boolean).join(' ');
  if (where) fields.push({ label: 'App', value: where });
  fields.push({ label: 'Record', value: `${attempt.recordType} #${attempt.recordId}` });
  if (attempt.runId !== null) fields.push({ label: 'Run', value: `#${attempt.runId}` });
  fields.push({ label: 'Policy', value: `${attempt.policy} (${attempt.action}, attempt ${attempt.attempt})` });
  fields.push({ label: 'Idempotency key', value: attempt.key });
  const lines = [`Alert: ${attempt.summary}`];
  if (attempt.answer === 'already_running') lines.push(JOINED_LINE);
  if (outcome.kind === 'stopped' || outcome.kind === 'failed_request') {
    lines.push(`The service said: ${outcome.message}`);
  }
  if (outcome.kind === 'stopped')
    lines.push('deploy-watchdog will not act on this record again while the alert lasts.');
  if (outcome.kind === 'backup_read') {
    const r = outcome.reading;
    fields.push({ label: 'Backup', value: `${r.name} (#${r.id})` });
    fields.push({ label: 'Verified', value: r.verified ? 'yes' : 'no' });
    const copies = r.copies.map((c) => `${c.storage}: ${c.state}${c.error ? ` (${c.error})` : ''}`);
    fields.push({ label: 'Off-site', value: copies.length > 0 ? copies.join(', ') : 'none' });
  }
  const severity = outcomeSucceeded(outcome) ? 'ok' : outcome.kind === 'no_run' ? 'info' : attempt.severity;
  return attemptNotice(attempt, { title: outcomeTitle(words, outcome), severity, fields, lines });
}

/**
 * A remediation notice about an attempt, with its alert's link and fingerprint: a channel with a
 * living message per alert group says it there, in the alert's thread.
 */
function attemptNotice(
  attempt: AttemptRow,
  notice: Required<Pick<NoticeNotification, 'title' | 'severity' | 'fields' | 'lines'>>,
): NoticeNotification {
  return { type: 'notice', topic: 'remediation', ...notice, url: attempt.url, fingerprint: attempt.fingerprint };
}

/**
 * The alert of a suspension: check `watchdog`, one per suspended policy, or per policy and
 * environment, so it is routed, silenced, repeated and resolved like any other alert. A whole
 * policy's keeps the fingerprint and labels it always had (a firing one carries on across the
 * upgrade). An environment's pause names the environment in an `environment` label, NOT in
 * `environment_type`: routes written for that environment's apps must not take it, since the fix
 * (the token's rights) is whoever runs deploy-watchdog's, as for every other watchdog alert.
 */
export function suspensionFinding(s: Suspension): Finding {
  const scope = s.scope.kind === 'policy' ? null : s.scope;
  const where = scope && scopeText(scope);
  const place =
    scope === null ? [] : scope.environment === null ? ['no-environment'] : ['environment', scope.environment];
  return presented({
    fingerprint: fingerprint('watchdog', 'remediation', s.policy, ...place),
    check: 'watchdog',
    severity: 'warning',
    summary: `Remediation policy ${s.policy} ${where ? `paused for ${where}` : 'suspended'}: the service refused ${s.action} with ${s.code}`,
    details: {
      policy: s.policy,
      action: s.action,
      code: s.code,
      message: s.message,
      ...(where ? { environment: where } : {}),
      suspended_at: new Date(s.at).toISOString(),
      lifted: 'when deploy-watchdog restarts or reloads its config',
    },
    labels: {
      check: 'watchdog',
      source: 'remediation',
      policy: s.policy,
      ...(scope ? { environment: scope.environment ?? 'none' } : {}),
    },
    since: new Date(s.at).toISOString(),
    subject: { type: 'source' },
  });
}
