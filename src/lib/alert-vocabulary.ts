/**
 * The words every stage speaks about an alert: how bad it is, its labels, the record it is about and
 * the facts a reader is shown. Outside any stage, so detectors, the lifecycle, notify and
 * remediation share them without one stage importing another's module for its vocabulary. Which
 * checks exist is not said here: `CheckName` is derived from the detector registry.
 */

/** How bad a finding is; ordered, so a rise can be detected. */
export type Severity = 'info' | 'warning' | 'critical';

/** Severity order: a higher number is worse. */
export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/**
 * Labels route, group and silence alerts. The well-known keys are listed; detectors may add more
 * (workflow, action, step, rule…). Values are strings; an unknown value is left out, not "null".
 * `C` narrows `check` where the check is known (a detector's own findings).
 */
export interface Labels<C extends string = string> {
  check: C;
  namespace?: string;
  project?: string;
  environment_type?: string;
  app?: string;
  server?: string;
  [key: string]: string | undefined;
}

/** The record a finding is about, so remediation knows what to act on. */
export interface Subject {
  type: 'run' | 'app' | 'url' | 'backup' | 'attention' | 'source' | 'server' | 'installer';
  id?: number;
}

/**
 * A subject as one string, `type:id` (`run:42`), or `type:*` for every subject of a type: how an
 * open alert's subject is matched with a record of a bulk read (`relevanceFor`) and with a record
 * a read set aside (`HeldSubjects`).
 */
export function subjectKey(subject: Subject): string {
  return `${subject.type}:${subject.id ?? '*'}`;
}

/** What an open alert is about (a job's, handed to its collectors and detectors): the record a collector may need to read again. */
export interface OpenSubject {
  /** The alert's check (`failed_runs`, …): a collector re-reads the subjects of the checks it follows. */
  check: string;
  subject: Subject;
  /** The alert's details (`app_id`, `workflow`, …), where the reader needs more than the record. */
  details?: Readonly<Record<string, string>>;
}

/**
 * One fact shown under an alert's summary, as its check chose it: "Step: install". `kind: 'time'`
 * marks an ISO 8601 value each renderer shows its own way (a Slack date token, UTC in a mail).
 * Plain API text: renderers escape it for their medium.
 */
export interface Fact {
  label: string;
  value: string;
  kind?: 'time';
}

/**
 * The label of a finding meant for the daily digest alone (`delivery: digest`): it is tracked, and
 * listed in each digest (`notify.digest`) while open, like any alert, but never sent as a message
 * of its own. For what is worth knowing and not worth a page (a production app behind its branch).
 */
export const DIGEST_ONLY_LABEL = { delivery: 'digest' } as const;

/** Whether an alert with these labels goes to the daily digest alone ({@link DIGEST_ONLY_LABEL}). */
export function isDigestOnly(labels: Labels): boolean {
  return labels.delivery === DIGEST_ONLY_LABEL.delivery;
}

/**
 * One line of an alert's log excerpt, as the service wrote it: cut to the configured width, its
 * control characters folded to spaces, and the API token scrubbed; still API text, which renderers
 * escape for their medium. `error`: it reads as an error line (shown first).
 */
export interface ContextLogLine {
  /** When the service logged it (ISO 8601, as the service wrote it), or null. */
  time: string | null;
  line: string;
  error: boolean;
}

/**
 * What the API told about an alert after the cycle that raised it (`src/context/`), shown with its
 * check's own facts: the log around a failed run, the restore point of a failed update, and what
 * could not be read. Every string is API text or our words about it, unescaped.
 */
export interface AlertContext {
  /** Facts beside the check's own: "Restore point: kept: the app was left as before". */
  facts: Fact[];
  /** The lines of the log around the failure, errors first; null when none were read. */
  log: {
    /** The log source read (`setup`, `upgrade`, `backup`, `main`…). */
    source: string;
    lines: ContextLogLine[];
    /** How many lines the service gave around the failure, of which `lines` are shown. */
    matched: number;
  } | null;
  /** What could not be read, in a few words each: "logs not available: the project's plan has no log access (plan_required)". */
  notes: string[];
}
