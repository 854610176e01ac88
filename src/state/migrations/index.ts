/**
 * Every schema migration, in order. To add one: write `NNN-name.ts` with
 * `export default { version: NNN, name, up } satisfies Migration`, import it here and append it to
 * the array. Never edit or renumber a migration that has shipped: add a new one.
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

/** The migrations `Store.open` applies by default, lowest version first. */
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
];
