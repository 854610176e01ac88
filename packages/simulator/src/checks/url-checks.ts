/** The url_checks check's staging: a URL's outside check that fails, passes, did not run or stopped running. */
import type { UrlRecord } from '../../../../src/api/schemas.js';
import type { UrlRec } from '../sim-state.js';
import { PUBLIC_CHECK_PASSED } from '../vocabulary.js';
import { HOUR, type StageContext } from './stage-context.js';

/** Staging operations of the url_checks check (`control.checks.url_checks`). */
export function urlChecksStaging(sim: StageContext) {
  /** Sets fields of a URL's outside check now and answers the URL as the service shows it. */
  function change(urlId: number, fields: (now: number) => Partial<UrlRec>): UrlRecord {
    const now = sim.now();
    const url = sim.url(urlId);
    Object.assign(url, fields(now));
    return sim.core.views.url(url, now);
  }
  return {
    /** The outside check of a URL fails with this code. */
    fail: (urlId: number, code: string): UrlRecord =>
      change(urlId, (now) => ({
        publicCheck: 'failed',
        publicCheckCode: code,
        publicCheckedAt: now,
        checkStopped: false,
      })),
    /** The outside check of a URL passes. */
    pass: (urlId: number): UrlRecord =>
      change(urlId, (now) => ({
        publicCheck: 'passed',
        publicCheckCode: PUBLIC_CHECK_PASSED,
        publicCheckedAt: now,
        checkStopped: false,
      })),
    /**
     * The outside check of a URL did not run: `public_check` null, `code` saying why (null: nothing
     * said), the last check `hoursAgo` (null: never checked).
     */
    skip(urlId: number, code: string | null, options: { hoursAgo?: number | null } = {}): UrlRecord {
      const hoursAgo = options.hoursAgo ?? null;
      return change(urlId, (now) => ({
        publicCheck: null,
        publicCheckCode: code,
        publicCheckedAt: hoursAgo === null ? null : now - hoursAgo * HOUR,
        checkStopped: true,
      }));
    },
    /** The outside check of a URL stopped running `hoursAgo`: its last verdict stays, its time no longer moves. */
    stop: (urlId: number, options: { hoursAgo: number }): UrlRecord =>
      change(urlId, (now) => ({ publicCheckedAt: now - options.hoursAgo * HOUR, checkStopped: true })),
  };
}
