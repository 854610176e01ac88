import type { EnvironmentType } from '../api/schemas.js';
import type { Severity } from '../lib/alert-vocabulary.js';

/**
 * Severity per environment type; `none` is for records outside any environment (environment_type
 * null). Detectors whose findings matter more in production judge by one of these.
 */
export type EnvironmentSeverity = Record<EnvironmentType | 'none', Severity>;

/** Critical in production, warning elsewhere: the default for failures. */
export const PRODUCTION_CRITICAL: EnvironmentSeverity = {
  production: 'critical',
  staging: 'warning',
  development: 'warning',
  none: 'warning',
};
