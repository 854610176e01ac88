/**
 * Which config each term's leader did the work with, so that replicas run with different configs
 * (a replica left on an old ConfigMap, another route on one host) do not pass the work between
 * them unseen: whichever leads checks, routes and remediates by its own config, and the alerts of
 * its term reach only its channels. The leader records a digest of its config in `meta` when its
 * term starts and when it reloads; a new leader whose config differs from the last one's says so,
 * and so does a follower that sees a leader with another config.
 */
import crypto from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config/load-config.js';
import type { Logger } from '../lib/logger.js';
import type { Store } from '../state/store.js';

/** The `meta` fact: `{ epoch, digest }` of the last leader's config. */
const LEADER_CONFIG_FACT = 'leader_config';
const LeaderConfigFact = z.object({ epoch: z.number(), digest: z.string() });

/**
 * The digest of what the leader's work reads of a config. `state`, `server` and `log` are left
 * out: each replica may reach the database, listen and log its own way. Secrets count as
 * `<secret>` (`Secret.toJSON`), so neither they nor a hash of them are stored, and replicas that
 * differ only in a secret (another Slack webhook URL, another token) are not told apart.
 */
export function leaderConfigDigest(config: Config): string {
  const { api, jobs, checks, alerts, notify, remediation } = config;
  const text = JSON.stringify({ api, jobs, checks, alerts, notify, remediation });
  return crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * Records the config the leader of term `epoch` works by, in a transaction of its own (fenced by
 * the term), when its work starts and after each reload; warns when the last leader of another
 * term did its work with a different one.
 */
export function recordLeaderConfig(store: Store, config: Config, epoch: number, log: Logger): void {
  const digest = leaderConfigDigest(config);
  store.transaction(() => {
    const last = lastLeaderConfig(store.getMeta(LEADER_CONFIG_FACT));
    if (last && last.epoch !== epoch && last.digest !== digest) {
      log.warn(
        { epoch, lastEpoch: last.epoch },
        `leading with a config other than the last leader's (epoch ${last.epoch}): expected while a changed config rolls out; otherwise the replicas' configs differ, and each routes and remediates by its own while it leads (run every replica with the same config)`,
      );
    }
    store.setMeta(LEADER_CONFIG_FACT, JSON.stringify({ epoch, digest }));
  });
}

/**
 * Said by a follower when it sees the leader of `epoch`: a warning when that leader's config
 * differs from its own, so the difference is seen before a failover puts it to work. Advisory: a
 * leader that has not recorded its config yet, or a state that cannot be read within a second,
 * says nothing (the next leader's term says it).
 */
export function compareWithLeaderConfig(store: Store, config: Config, epoch: number, log: Logger): void {
  let last: z.infer<typeof LeaderConfigFact> | undefined;
  try {
    last = lastLeaderConfig(store.within(1_000, () => store.getMeta(LEADER_CONFIG_FACT)));
  } catch {
    return;
  }
  if (last?.epoch === epoch && last.digest !== leaderConfigDigest(config)) {
    log.warn(
      { lastEpoch: last.epoch },
      `this replica's config differs from the leader's (epoch ${last.epoch}): expected while a changed config rolls out; otherwise, should this replica lead, it routes and remediates by its own (run every replica with the same config)`,
    );
  }
}

function lastLeaderConfig(value: string | undefined): z.infer<typeof LeaderConfigFact> | undefined {
  if (value === undefined) return undefined;
  try {
    return LeaderConfigFact.safeParse(JSON.parse(value)).data;
  } catch {
    return undefined; // Unreadable: as if none was recorded; this term's replaces it.
  }
}
