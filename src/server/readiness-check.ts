/**
 * One condition of readiness, as `/readyz` says it: what the daemon judges (`app/readiness.ts`),
 * the front door answers, the console shows. A leaf, so each of them names it without importing
 * another's module.
 */

/** One reason the daemon is not ready, e.g. `{ check: 'job:runs', ok: false, detail: 'no completed cycle for 4m' }`. */
export interface ReadinessCheck {
  check: string;
  ok: boolean;
  detail: string;
}
