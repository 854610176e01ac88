/**
 * A run's lineage. A retry restarts a failed run from the step that failed under the same id
 * (reference §4), whoever sends it (a remediation policy, a person, the service's own automatic
 * retry), so one run can fail, run again and fail again. What the open failed_runs alert last said
 * of its run (`RunsSnapshot.openFailures`, the alert's details) tells a retry from a first run:
 * failed_runs follows the run through it, and stuck_runs measures a retried run from its retry.
 *
 * The details an alert about a run keeps for this (ISO 8601 times): `since` (the first failure
 * told), `failed_at` (the latest failure, when it is not the first), `retrying_since` (since when
 * the service has been retrying it by itself), `retry_since` (since when it has been running again)
 * and `retries` (how many retries of it failed).
 */
import type { Run, RunListItem } from '../api/schemas.js';
import { parseTime } from '../lib/parse-time.js';

/** What an open failed_runs alert last said of its run: its details. */
export type Told = Readonly<Record<string, string>>;

/** The step a run failed at: the reference gives `reason` only as "why a step failed", so the last step carrying one. */
export function failedStep(detail: Run | undefined): Run['steps'][number] | undefined {
  return detail ? [...detail.steps].reverse().find((s) => s.reason !== null) : undefined;
}

/** When a run in a failed state failed: its last update (nothing else moves a failed run), else its creation. */
export function failureTime(run: RunListItem): number | null {
  return parseTime(run.updated_at) ?? parseTime(run.created_at);
}

/** When the failure an alert told of happened: its `failed_at`, else its `since` (the first failure). */
export function toldFailedAt(told: Told): number | null {
  return parseTime(told.failed_at ?? told.since);
}

/**
 * Since when a run in error has been retrying by itself: the earliest of its failed step's time,
 * its last update and when an open alert first saw it retrying. Each automatic retry moves the
 * first two, so only the alert's memory keeps endless retries from looking new every time.
 */
export function retryingSince(run: RunListItem, detail: Run | undefined, told: Told | undefined): number | null {
  const times = [parseTime(told?.retrying_since), parseTime(failedStep(detail)?.updated_at), failureTime(run)].filter(
    (t): t is number => t !== null,
  );
  return times.length > 0 ? Math.min(...times) : null;
}

/**
 * When the retry under way began, for a run going again after a failure an alert told of: what
 * the alert already said (`retry_since`), else the first step that started at or after that failure
 * (a retry restarts the failed step), else the run's last update; null when none is known.
 */
export function retrySince(run: RunListItem, detail: Run | undefined, told: Told): number | null {
  const known = parseTime(told.retry_since);
  if (known !== null) return known;
  const failedAt = toldFailedAt(told);
  const startsAfter = (detail?.steps ?? [])
    .map((s) => parseTime(s.started_at))
    .filter((t): t is number => t !== null && failedAt !== null && t >= failedAt);
  return startsAfter.length > 0 ? Math.min(...startsAfter) : parseTime(run.updated_at);
}

/** The step a run going again is at: the last one that has started (steps are listed in order). */
export function currentStep(detail: Run | undefined): Run['steps'][number] | undefined {
  return detail ? [...detail.steps].reverse().find((s) => s.started_at !== null) : undefined;
}
