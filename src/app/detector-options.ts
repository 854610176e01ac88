import type { Config } from '../config/load-config.js';
import type { DetectorOptions } from '../detectors/registry.js';
import type { Severity } from '../detectors/finding.js';

/** The dashboard's severity words as the detectors' ones. */
const ATTENTION_SEVERITY: Record<Config['checks']['attention']['min_severity'], Severity> = {
  danger: 'critical',
  warning: 'warning',
  info: 'info',
};

/**
 * Maps `checks.*` of the config onto the detectors' options: state words, durations in ms. A check
 * switched off (`enabled: false`) is left out, which is how the registry knows not to run it.
 * Pure: the same config always gives the same options.
 */
export function detectorOptionsFromConfig(checks: Config['checks']): DetectorOptions {
  const out: DetectorOptions = {};
  const activeStates = checks.stuck_runs.active_states;
  if (checks.failed_runs.enabled) {
    out.failed_runs = {
      failedStates: checks.failed_runs.failed_states,
      activeStates,
      retryingGraceMs: checks.failed_runs.retrying_grace,
    };
  }
  if (checks.stuck_runs.enabled) {
    out.stuck_runs = { activeStates, maxDurationMs: checks.stuck_runs.max_duration };
  }
  if (checks.certificates.enabled) {
    out.certificates = { warnDays: checks.certificates.warn_days, criticalDays: checks.certificates.critical_days };
  }
  if (checks.url_checks.enabled) out.url_checks = {};
  if (checks.backups.enabled) {
    out.backups = {
      maxAgeMs: { ...checks.backups.max_age },
      states: {
        succeeded: checks.backups.succeeded_states,
        running: checks.backups.running_states,
        failed: checks.backups.failed_states,
      },
      requireVerified: checks.backups.require_verified,
      ...(checks.backups.offsite ? { offsite: { failedStates: checks.backups.offsite_failed_states } } : {}),
    };
  }
  if (checks.attention.enabled) {
    out.attention = {
      minSeverity: ATTENTION_SEVERITY[checks.attention.min_severity],
      ignoreRules: checks.attention.ignore_rules,
    };
  }
  if (checks.maintenance.enabled) out.maintenance = { maxDurationMs: checks.maintenance.max_duration };
  if (checks.servers.enabled) out.servers = { badStates: checks.servers.bad_states };
  return out;
}
