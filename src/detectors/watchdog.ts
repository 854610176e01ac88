/**
 * The watchdog's own trouble (check `watchdog`): a source it cannot read, a check disabled for lack
 * of permission, records a read set aside, a remediation policy suspended. No detector finds it:
 * the daemon and the remediation make these findings themselves (`alerts/source-health.ts`,
 * `alerts/skipped-records.ts`, `remediation/outcome-notice.ts`).
 * What is here is how they are shown, listed in the registry beside the checks' own.
 */
import { factsFrom, type Presentation } from './presentation.js';

/** The name of the watchdog's own findings: their `check` and `check` label. */
export const WATCHDOG = 'watchdog';

/** How the watchdog's own findings are shown. */
export const watchdogPresentation: Presentation = {
  noun: ['watchdog problem', 'watchdog problems'],
  facts: factsFrom([
    'error',
    'failed_cycles',
    ['last_success', 'Last success', 'time'],
    'permission',
    'refused',
    'until',
    'records',
    'example',
    'why',
  ]),
  nextStep: ({ details }) => {
    if (details.reason === 'access_denied')
      return "Give the token's role read access to those records' environment, or leave it: their alerts are held meanwhile.";
    if (details.config_key)
      return `If the service means one of the stated values by it, set ${details.config_key} to that value in the config and reload (SIGHUP); else report the record to the service's owners. Its alerts are held meanwhile.`;
    if (details.reason === 'unknown_value' || details.reason === 'unreadable')
      return "Report the record to the service's owners; its alerts are held until it reads again.";
    if (details.records) return 'Run deploy-watchdog check to see which records cannot be read, and why.';
    if (details.permission) return 'Give the token the permission named, then reload the daemon (SIGHUP).';
    if (details.error)
      return "Run deploy-watchdog check to see the read fail as the daemon does; check the token, api.base_url and the service's status.";
    return null;
  },
};
