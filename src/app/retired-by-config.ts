/**
 * What a configuration stopped looking at, and how the daemon lets go of it at start, at reload,
 * and before `check`'s cycle.
 */
import type { AlertRow } from '../alerts/alert-store.js';
import { closeRetired, type CloseReason } from '../alerts/close-retired.js';
import { commitFindings } from '../alerts/commit-findings.js';
import { recordsJobKey, sourceJobKey } from '../alerts/job-key.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config } from '../config/load-config.js';
import { fingerprint } from '../detectors/fingerprint.js';
import { CHECKS, type DetectorCheck, type DetectorOptions } from '../detectors/registry.js';
import type { Store } from '../state/store.js';
import { updateOpenAlerts, type CycleDeps } from './job-cycle.js';

/**
 * Which open alerts a configuration no longer looks at, and why: a check switched off, its job set
 * "off", an attention rule ignored. Source alerts (`watchdog`) are not judged here: the daemon
 * resolves those of a job switched off itself. A check off for lack of permission is not "by
 * configuration" and is not covered either: its alerts wait for the permission to come back.
 */
export function retiredByConfig(config: Config, options: DetectorOptions): (alert: AlertRow) => CloseReason | null {
  const ignored = config.checks.attention.ignore_rules.map((rule) => fingerprint('attention', rule, ''));
  return (alert) => {
    const job = CHECKS.find((c) => c.name === alert.check)?.job;
    if (job === undefined) return null;
    if (options[alert.check as DetectorCheck] === undefined) return 'check disabled by configuration';
    if (config.jobs[job] === null) return 'job switched off by configuration';
    if (alert.check === 'attention' && ignored.some((prefix) => alert.fingerprint.startsWith(prefix))) {
      return 'attention rule ignored by configuration';
    }
    return null;
  };
}

/**
 * Closes, without a notification, the alerts of checks the configuration switched off (see
 * `src/alerts/close-retired.ts`): nothing will ever resolve them, and a "resolved" would claim a
 * problem is over that nobody looked at.
 */
export function closeRetiredAlerts(store: Store, deps: CycleDeps): void {
  const closed = store.transaction(() =>
    closeRetired(deps.alerts, retiredByConfig(deps.config, deps.detectorOptions), deps.clock.now()),
  );
  if (closed.length === 0) return;
  const byReason: Record<string, number> = {};
  for (const c of closed) byReason[`${c.check}: ${c.reason}`] = (byReason[`${c.check}: ${c.reason}`] ?? 0) + 1;
  deps.logger.info({ closed: byReason }, 'open alerts of checks switched off closed, without notification');
  updateOpenAlerts(deps);
}

/** A job switched off has nothing left to say about its source: its source alert resolves. */
export function resolveSwitchedOffJobs(store: Store, deps: CycleDeps, enabled: ReadonlyMap<SnapshotJob, string>): void {
  const now = deps.clock.now();
  const off = JOB_NAMES.filter((job) => !enabled.has(job));
  if (off.length === 0) return;
  // Only the outbox takes these: remediation decides on a cycle's reads, and none ran here.
  const events = store.transaction(() =>
    off.flatMap((job) => {
      const key = sourceJobKey(job);
      const write = () => [
        { job: key, findings: [], options: { ...deps.lifecycle, forCycles: 1 } },
        // Nor about the records its reads set aside.
        { job: recordsJobKey(job), findings: [], options: { ...deps.lifecycle, forCycles: 1 } },
      ];
      return commitFindings(deps.alerts, { job: key, now, write }, [deps.notifier]);
    }),
  );
  if (events.length > 0)
    deps.logger.info({ jobs: off, events: events.length }, 'source alerts of jobs switched off resolved');
}
