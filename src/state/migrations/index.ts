/**
 * Every schema migration, in order, for BOTH engines (SQLite and PostgreSQL): one definition each.
 *
 * To add one: write `NNN-name.ts` beside these, exporting by default
 * `defineMigration(NNN, 'name', (d) => <template of SQL>)`, import it here, append it to the array
 * and pin its SQL in test/state/migration-sql.test.ts. Write the SQL once, saying through the dialect `d` (`../sql-dialect.ts`) what
 * the engines say differently:
 * - `${d.int64}` for epoch milliseconds and ids (INTEGER / BIGINT); plain `INTEGER` for counts;
 * - `${d.serialKey}` for a row id that is never reused (AUTOINCREMENT / identity);
 * - `)${d.strict};` to close a CREATE TABLE (SQLite's STRICT);
 * - `${d.randomHex(n)}` for random hex digits;
 * - `${d.choose({ sqlite: '…', postgres: '…' })}` only for a step the engines do truly differently
 *   (altering a CHECK: SQLite rebuilds the table).
 * Where nothing differs, the SQL may be a plain string. A missing word belongs in `SqlDialect`, with
 * both engines' spelling, not in a second copy of the migration. Never edit or renumber a
 * migration that has shipped: add a new one (test/state/migration-history.test.ts holds 1–14
 * against the frozen copies those states were built with).
 *
 * A migration written the old way, as a SQLite file and a PostgreSQL twin: keep the SQLite file's
 * text, put `(d) => ` before the template of its `up`, and replace each `INTEGER` the twin spells BIGINT by
 * `${d.int64}`, `INTEGER PRIMARY KEY AUTOINCREMENT` by `${d.serialKey}`, `) STRICT;` by
 * `)${d.strict};`; whatever else the twin says differently goes in `d.choose`. Then delete the twin.
 */
import type { Migration } from '../migration.js';
import core from './001-core.js';
import alerts from './002-alerts.js';
import notify from './003-notify.js';
import remediation from './004-remediation.js';
import remediationEdge from './005-remediation-edge.js';
import alertFacts from './006-alert-facts.js';
import consoleMigration from './007-console.js';
import alertContext from './008-alert-context.js';
import acknowledge from './009-acknowledge.js';
import slackApp from './010-slack-app.js';
import slackInteractions from './011-slack-interactions.js';
import alertTiming from './014-alert-timing.js';
import outboxUnconfirmed from './015-outbox-unconfirmed.js';
import backupReadback from './016-backup-readback.js';
import outboxBodies from './017-outbox-bodies.js';
import onCallAcknowledge from './018-on-call-acknowledge.js';
import outboxClaims from './020-outbox-claims.js';

/** The migrations `Store.open` and `Store.openPostgres` apply by default, lowest version first. */
export const ALL_MIGRATIONS: readonly Migration[] = [
  core,
  alerts,
  notify,
  remediation,
  remediationEdge,
  alertFacts,
  consoleMigration,
  alertContext,
  acknowledge,
  slackApp,
  slackInteractions,
  alertTiming,
  outboxUnconfirmed,
  backupReadback,
  outboxBodies,
  onCallAcknowledge,
  outboxClaims,
];
