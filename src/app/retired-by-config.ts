import type { AlertRow } from '../alerts/alert-store.js';
import type { CloseReason } from '../alerts/close-retired.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config } from '../config/load-config.js';
import { fingerprint } from '../detectors/fingerprint.js';
import { detectorsFor, type DetectorCheck, type DetectorOptions } from '../detectors/registry.js';

/**
 * Which open alerts a configuration no longer looks at, and why: a check switched off, its job set
 * "off", an attention rule ignored. Source alerts (`watchdog`) are not judged here: the daemon
 * resolves those of a job switched off itself. A check off for lack of permission is not "by
 * configuration" and is not covered either: its alerts wait for the permission to come back.
 */
export function retiredByConfig(config: Config, options: DetectorOptions): (alert: AlertRow) => CloseReason | null {
  const jobOf = new Map<string, SnapshotJob>();
  for (const job of JOB_NAMES) for (const d of detectorsFor(job)) jobOf.set(d.name, job);
  const ignored = config.checks.attention.ignore_rules.map((rule) => fingerprint('attention', rule, ''));
  return (alert) => {
    const job = jobOf.get(alert.check);
    if (job === undefined) return null;
    if (options[alert.check as DetectorCheck] === undefined) return 'check disabled by configuration';
    if (config.jobs[job] === null) return 'job switched off by configuration';
    if (alert.check === 'attention' && ignored.some((prefix) => alert.fingerprint.startsWith(prefix))) {
      return 'attention rule ignored by configuration';
    }
    return null;
  };
}
