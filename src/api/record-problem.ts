/**
 * What a record's own check found wrong with it: the words a set-aside record and an error about
 * one record share. A leaf, so the API's errors can carry it without importing the quarantine.
 */

/**
 * Why a record was set aside; a fixed set, so it can label a metric:
 * - `access_denied`: a read by id refused (the record's environment, §5.4);
 * - `not_found`: a read by id of a record the list named, gone since;
 * - `unreadable`: a field the client cannot read (a timestamp, a type, a missing field);
 * - `unknown_value`: a value beyond those the reference states (§3).
 * Any other failure of a read by id (a 5xx, a timeout, the token refused) says nothing about the
 * record and fails the read whole, as a failed list does.
 */
export const QUARANTINE_REASONS = ['access_denied', 'not_found', 'unreadable', 'unknown_value'] as const;
/** One of {@link QUARANTINE_REASONS}. */
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

/** What a record's own check found wrong with it. */
export interface RecordProblem {
  reason: QuarantineReason;
  /** What was wrong, in words: `ssl_status: "revoked" is not a stated value`. API text, scrubbed of the token. */
  detail: string;
  /** For `unknown_value`: the field (its path within the record) and the value met. */
  field?: string;
  value?: string;
  /** For `unknown_value` of a field the reference states values for: the config key that makes it known. */
  configKey?: string;
}
