/**
 * Which config each term's leader did the work with, so that replicas run with different configs
 * (a replica left on an old ConfigMap, another route on one host) do not pass the work between
 * them unseen: whichever leads checks, routes and remediates by its own config, and the alerts of
 * its term reach only its channels. The leader records a digest of its config in `meta` when its
 * term starts and when it reloads; a new leader whose config differs from the last one's says so.
 */
import crypto from 'node:crypto';
import type { Config } from '../config/load-config.js';
import type { Logger } from '../lib/logger.js';
import type { Store } from '../state/store.js';

/** The `meta` fact: `{ epoch, digest }` of the last leader's config. */
const LEADER_CONFIG_FACT = 'leader_config';

/**
 * The digest of what the leader's work reads of a config. `state`, `server` and `log` are left
 * out: each replica may reach the database, listen and log its own way. Secrets count as
 * `<secret>` (`Secret.toJSON`), so neither they nor a hash of them are stored.
 */
export function leaderConfigDigest(config: Config): string {
  const { api, jobs, checks, alerts, notify, remediation } = config;
  const text = JSON.stringify({ api, jobs, checks, alerts, notify, remediation });
  return crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * Records the config of the term `epoch` (in the caller's fenced transaction), and warns when the
 * last leader of another term did its work with a different one.
 */
export function recordLeaderConfig(store: Store, config: Config, epoch: number, log: Logger): void {
  const digest = leaderConfigDigest(config);
  const last = lastLeaderConfig(store.getMeta(LEADER_CONFIG_FACT));
  if (last && last.epoch !== epoch && last.digest !== digest) {
    log.warn(
      { epoch, lastEpoch: last.epoch },
      `leading with a config other than the last leader's (epoch ${last.epoch}): expected while a changed config rolls out; otherwise the replicas' configs differ, and each routes and remediates by its own while it leads (run every replica with the same config)`,
    );
  }
  store.setMeta(LEADER_CONFIG_FACT, JSON.stringify({ epoch, digest }));
}

function lastLeaderConfig(value: string | undefined): { epoch: number; digest: string } | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as { epoch?: unknown; digest?: unknown };
    if (typeof parsed.epoch === 'number' && typeof parsed.digest === 'string') {
      return { epoch: parsed.epoch, digest: parsed.digest };
    }
  } catch {
    // Unreadable: as if none was recorded; this term's replaces it.
  }
  return undefined;
}
