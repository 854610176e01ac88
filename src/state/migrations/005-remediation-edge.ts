import { defineMigration } from '../migration.js';

/**
 * What remediation needs to act safely at the edges of one installation (owned by `src/remediation/`):
 * - `meta.installation_id`: ten hex digits drawn once, when the state is created or migrated to
 *   this version, and never changed. Every idempotency key carries it, so a new or lost state file
 *   never sends a key an earlier one sent (the service would refuse it as reused, or replay an old
 *   answer). `randomblob` is SQLite's ChaCha20 generator, seeded from the operating system;
 *   PostgreSQL's `gen_random_uuid` is its strong random source too.
 *   `ON CONFLICT DO NOTHING`: a value already there is this installation's and is kept.
 *   Beside it the remediation keeps `meta.remediation_key_number`, the number of the last key it
 *   gave out (written with its first key): a number is never given out twice in one state file,
 *   even after retention pruned the attempts that used it.
 * - `remediation_suspensions` keyed by policy AND environment: `access_denied` pauses a policy in
 *   the one environment the token may not change (reference §5.4). `environment` is `*` for the
 *   whole policy (every other refusal only a person can fix), `none` for apps outside any
 *   environment (as `checks.backups.max_age.none` says it), else the app's environment type.
 *   Rows of the previous version suspended the whole policy and are kept as `*`.
 * - `remediation_audit.environment`: the environment of the app a row is about, as the alert's
 *   labels gave it (NULL: outside any environment, or a row about no record).
 */
export default defineMigration(
  5,
  'remediation-edge',
  (d) => `
    INSERT INTO meta (key, value) VALUES ('installation_id', ${d.randomHex(10)})
      ON CONFLICT (key) DO NOTHING;

    CREATE TABLE remediation_suspensions_by_environment (
      policy      TEXT    NOT NULL,
      environment TEXT    NOT NULL CHECK (environment <> ''),
      action      TEXT    NOT NULL,
      code        TEXT    NOT NULL,
      message     TEXT    NOT NULL,
      at          ${d.int64} NOT NULL,
      PRIMARY KEY (policy, environment)
    )${d.strict};
    INSERT INTO remediation_suspensions_by_environment (policy, environment, action, code, message, at)
      SELECT policy, '*', action, code, message, at FROM remediation_suspensions;
    DROP TABLE remediation_suspensions;
    ALTER TABLE remediation_suspensions_by_environment RENAME TO remediation_suspensions;

    ALTER TABLE remediation_audit ADD COLUMN environment TEXT;
  `,
);
