import type { EnvironmentType } from '../api/schemas.js';
import type { Severity } from '../lib/alert-vocabulary.js';

/**
 * Critical in production, warning elsewhere (other environments, and records outside any): the
 * severity of failures, for the detectors whose findings matter more in production.
 */
export function productionCritical(environment: EnvironmentType | null | undefined): Severity {
  return environment === 'production' ? 'critical' : 'warning';
}
