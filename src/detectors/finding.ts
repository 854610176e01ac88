/**
 * What a detector reports: one problem, with a fingerprint that stays the same for as long as the
 * problem lasts, so the alert lifecycle can tell "new", "still there" and "gone".
 */

/** How bad a finding is; ordered, so a rise can be detected. */
export type Severity = 'info' | 'warning' | 'critical';

/** Severity order: a higher number is worse. */
export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** The checks deploy-watchdog runs; every finding belongs to one. */
export const CHECK_NAMES = [
  'failed_runs',
  'stuck_runs',
  'certificates',
  'url_checks',
  'backups',
  'attention',
  'maintenance',
  /** A server in a bad state; its alerts hold back those of the apps on it (notify inhibition). */
  'servers',
  /** The watchdog's own trouble: a source that cannot be read, a check disabled for lack of permission. */
  'watchdog',
] as const;
/** One of {@link CHECK_NAMES}. */
export type CheckName = (typeof CHECK_NAMES)[number];

/**
 * Labels route, group and silence alerts. The well-known keys are listed; detectors may add more
 * (workflow, action, step, rule…). Values are strings; an unknown value is left out, not "null".
 */
export interface Labels {
  check: CheckName;
  namespace?: string;
  project?: string;
  environment_type?: string;
  app?: string;
  server?: string;
  [key: string]: string | undefined;
}

/** The record a finding is about, so remediation knows what to act on. */
export interface Subject {
  type: 'run' | 'app' | 'url' | 'backup' | 'attention' | 'source' | 'server';
  id?: number;
}

/** One problem found in one complete snapshot. */
export interface Finding {
  /** Stable for the life of the problem, e.g. `failed_runs/run/123`. */
  fingerprint: string;
  check: CheckName;
  severity: Severity;
  /** One line a person understands without context: "Update of shop (staging) failed at step install". */
  summary: string;
  /** Ordered facts shown under the summary: { run: '#123', step: 'install', reason: '…' }. */
  details: Record<string, string>;
  labels: Labels;
  /** Link to the app (its URL) where known. */
  url?: string | null;
  /** When the problem began according to the source (ISO 8601), where the source says. */
  since?: string | null;
  subject?: Subject;
  /**
   * Fire only once the finding has been seen continuously this long, measured by the lifecycle from
   * first sighting. For problems whose start the source does not say (an app left in maintenance):
   * the detector cannot tell "just now" from "for hours", so it reports at once and lets the
   * lifecycle hold the alert back. Absent: fire at once.
   */
  holdForMs?: number;
}
