/** The certificates check's staging: certificates that end soon, have ended, or that the service cannot judge. */
import type { UrlRecord } from '../../../../src/api/schemas.js';
import { DAY, type StageContext } from './stage-context.js';

/** Staging operations of the certificates check (`control.checks.certificates`). */
export function certificatesStaging(sim: StageContext) {
  /** Sets a certificate to end in `inDays` days (negative: already expired); the status follows. */
  function expire(urlId: number, options: { inDays: number }): UrlRecord {
    const now = sim.now();
    const url = sim.url(urlId);
    url.sslFixed = null;
    url.sslExpiresAt = now + options.inDays * DAY;
    return sim.core.views.url(url, now);
  }
  return {
    expire,
    /** Renews a certificate for 90 days. */
    renew: (urlId: number): UrlRecord => expire(urlId, { inDays: 90 }),
    /** The service reports the certificate `error` or `unknown` whatever its date; null: the date decides again. */
    setStatus(urlId: number, status: 'error' | 'unknown' | null): UrlRecord {
      const now = sim.now();
      const url = sim.url(urlId);
      url.sslFixed = status;
      return sim.core.views.url(url, now);
    },
  };
}
