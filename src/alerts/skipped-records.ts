/**
 * The watchdog's own finding about the records a job's read set aside (`api/quarantine.ts`): one
 * per job and reason, "runs: 2 runs cannot be read now (access_denied), e.g. run 42; their alerts
 * are held". Applied under the job key `records:<job>` by every complete read of the job, so it
 * fires once, stays open while any record is set aside for that reason, and resolves when none is.
 */
import type { QuarantinedRecord, RecordKind } from '../api/quarantine.js';
import type { QuarantineReason } from '../api/record-problem.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Finding } from '../detectors/finding.js';
import { presented } from '../detectors/registry.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { HeldNote, HeldSubjects } from './held-subjects.js';
import { subjectKey } from '../lib/alert-vocabulary.js';

/** How each reason reads in a sentence. */
const REASON_TEXT: Readonly<Record<QuarantineReason, string>> = {
  access_denied: 'cannot be read now (access_denied: the token may not read them by id)',
  not_found: 'cannot be read now (not_found right after the list named them)',
  unreadable: 'cannot be parsed (a timestamp or a field the watchdog cannot read)',
  unknown_value: 'set aside for a value beyond those the reference states',
};

const NOUNS: Readonly<Record<RecordKind, readonly [string, string]>> = {
  app: ['app', 'apps'],
  run: ['run', 'runs'],
  url: ['URL', 'URLs'],
  backup: ['backup', 'backups'],
  server: ['server', 'servers'],
  installer: ['marketplace service', 'marketplace services'],
  project: ['project', 'projects'],
  restore_point: ['restore point', 'restore points'],
  attention_section: ['attention section', 'attention sections'],
};

/** `2 runs`, `1 URL`. */
function counted(kind: RecordKind, n: number): string {
  return `${n} ${NOUNS[kind][n === 1 ? 0 : 1]}`;
}

/** A record set aside as a reader calls it: `run 42`, `attention section (id unreadable)`. */
export function recordExample(record: QuarantinedRecord): string {
  return `${NOUNS[record.kind][0]} ${record.id ?? '(id unreadable)'}`;
}

/** The short note an alert about a set-aside record carries: `cannot be read now: access_denied; held, not resolved`. */
export function heldNoteOf(record: QuarantinedRecord): string {
  const what = record.reason === 'unknown_value' || record.reason === 'unreadable' ? record.detail : record.reason;
  return `cannot be read now: ${what}; held, not resolved`;
}

/**
 * The subjects of the set-aside records, each with its note; the first record of a subject names it.
 * A backup's app is `undecided`: its newest backup may be the one set aside.
 */
export function heldSubjectsOf(records: readonly QuarantinedRecord[]): HeldSubjects {
  const held = new Map<string, HeldNote>();
  for (const record of records)
    for (const subject of record.subjects) {
      const reason = record.kind === 'backup' && subject.type === 'app' ? ('undecided' as const) : undefined;
      getOrAdd(held, subjectKey(subject), () => ({ note: heldNoteOf(record), reason }));
    }
  return held;
}

/** One finding per reason of the records `job`'s read set aside; none when it set none aside. */
export function skippedRecordsFindings(job: SnapshotJob, records: readonly QuarantinedRecord[]): Finding[] {
  const byReason = new Map<QuarantineReason, QuarantinedRecord[]>();
  for (const record of records) getOrAdd(byReason, record.reason, () => []).push(record);
  return [...byReason].map(([reason, list]) => {
    const byKind = new Map<RecordKind, number>();
    for (const r of list) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
    const kinds = [...byKind].map(([kind, n]) => counted(kind, n)).join(', ');
    const example = list.find((r) => r.id !== undefined) ?? list[0]!;
    const exampleText = recordExample(example);
    // A value beyond the stated ones is known to the watchdog once the admin says what it means.
    const keyed = list.find((r) => r.configKey !== undefined);
    const fix = keyed
      ? ` (${keyed.field} ${JSON.stringify(keyed.value)}: set ${keyed.configKey} to the stated value it means)`
      : '';
    return presented({
      fingerprint: `watchdog/records/${job}/${reason}`,
      check: 'watchdog',
      severity: 'warning',
      summary: `${job}: ${kinds} ${REASON_TEXT[reason]}, e.g. ${exampleText}${fix}; their alerts are held, the rest of the read is complete`,
      details: {
        job,
        reason,
        records: kinds,
        example: exampleText,
        why: example.detail,
        ...(keyed?.configKey !== undefined && { config_key: keyed.configKey }),
      },
      labels: { check: 'watchdog', job },
      subject: { type: 'source' },
    });
  });
}
