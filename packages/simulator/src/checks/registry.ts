/**
 * Each check's staging operations, one line each ({@link CHECK_STAGING}): what puts the simulated
 * service into the state a check of the product finds, and back. A test reaches them as
 * `control.checks.<check>.<operation>(…)` (`control.checks.certificates.expire(urlId, { inDays: 3 })`),
 * an out-of-process one as `POST /_sim/checks.<check>.<operation>`. Adding a check adds its module
 * here (`checks/<check>.ts`, named after the product's check) and one line, never a method on
 * `SimulatorControl`, which keeps what every check shares: time, faults, runs, modes, churn.
 */
import type { DetectorCheck } from '../../../../src/detectors/registry.js';
import { appStateStaging } from './app-state.js';
import { attentionStaging } from './attention.js';
import { backupsStaging } from './backups.js';
import { branchesStaging } from './branches.js';
import { certificatesStaging } from './certificates.js';
import { installersStaging } from './installers.js';
import { maintenanceStaging } from './maintenance.js';
import { repositoryChecksStaging } from './repository-checks.js';
import { restorePointsStaging } from './restore-points.js';
import { serversStaging } from './server-state.js';
import type { StageContext } from './stage-context.js';
import { upgradesStaging } from './upgrades.js';
import { urlChecksStaging } from './url-checks.js';

/** A check's staging module: its operations on one simulator. */
type Staging = (sim: StageContext) => Record<string, (...args: never[]) => unknown>;

/**
 * The staging of every check that needs its own, keyed by the product's check name (failed_runs
 * and stuck_runs stage runs, which the control's runs engine does for both).
 */
export const CHECK_STAGING = {
  certificates: certificatesStaging,
  url_checks: urlChecksStaging,
  backups: backupsStaging,
  attention: attentionStaging,
  maintenance: maintenanceStaging,
  servers: serversStaging,
  app_state: appStateStaging,
  branches: branchesStaging,
  repository_checks: repositoryChecksStaging,
  upgrades: upgradesStaging,
  restore_points: restorePointsStaging,
  installers: installersStaging,
} satisfies { [C in DetectorCheck]?: Staging };

/** The staging operations of every check of {@link CHECK_STAGING}, on one simulator. */
export type CheckStaging = { [C in keyof typeof CHECK_STAGING]: ReturnType<(typeof CHECK_STAGING)[C]> };

/** Builds every check's staging operations on one simulator. */
export function checkStaging(sim: StageContext): CheckStaging {
  // Safe: each entry is built by its own module, key by key.
  return Object.fromEntries(
    Object.entries(CHECK_STAGING).map(([name, staging]) => [name, staging(sim)]),
  ) as CheckStaging;
}

/**
 * The operation `<check>.<operation>` of `staging`, as `POST /_sim/checks.<check>.<operation>`
 * names it; undefined when no check has it (own properties only: a name from the wire never
 * reaches an object's prototype).
 */
export function stagingOperation(staging: CheckStaging, path: string): ((...args: unknown[]) => unknown) | undefined {
  const [check, operation, ...rest] = path.split('.');
  if (check === undefined || operation === undefined || rest.length > 0 || !Object.hasOwn(staging, check))
    return undefined;
  const operations = staging[check as keyof CheckStaging] as Record<string, unknown>;
  const fn = Object.hasOwn(operations, operation) ? operations[operation] : undefined;
  return typeof fn === 'function' ? (fn as (...args: unknown[]) => unknown) : undefined;
}
