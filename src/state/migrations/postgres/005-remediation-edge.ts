import type { Migration } from '../../migration.js';

/**
 * PostgreSQL's `../005-remediation-edge.ts`: the installation id, suspensions by policy and
 * environment, the audit's environment. The id is ten hex digits of `gen_random_uuid()` (the
 * server's strong random source, built in since PostgreSQL 13); the first ten are all random.
 */
const remediationEdge: Migration = {
  version: 5,
  name: 'remediation-edge',
  up: `
    INSERT INTO meta (key, value) VALUES ('installation_id', substr(replace(gen_random_uuid()::text, '-', ''), 1, 10))
      ON CONFLICT (key) DO NOTHING;

    CREATE TABLE remediation_suspensions_by_environment (
      policy      TEXT    NOT NULL,
      environment TEXT    NOT NULL CHECK (environment <> ''),
      action      TEXT    NOT NULL,
      code        TEXT    NOT NULL,
      message     TEXT    NOT NULL,
      at          BIGINT  NOT NULL,
      PRIMARY KEY (policy, environment)
    );
    INSERT INTO remediation_suspensions_by_environment (policy, environment, action, code, message, at)
      SELECT policy, '*', action, code, message, at FROM remediation_suspensions;
    DROP TABLE remediation_suspensions;
    ALTER TABLE remediation_suspensions_by_environment RENAME TO remediation_suspensions;

    ALTER TABLE remediation_audit ADD COLUMN environment TEXT;
  `,
};

export default remediationEdge;
