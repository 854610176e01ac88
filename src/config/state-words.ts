/**
 * The `state` words the watch engine assumes unless the configuration says otherwise: the defaults
 * of the `checks.*` state lists. The reference leaves the values of `state` fields open ("not
 * shown", §3), so these are only the words of the service the daemon was built against; pointing
 * it at a service that speaks others is a configuration change, not a code change. The simulator
 * speaks these words by default (its `VOCABULARY` takes them from here) and adds the ones no check
 * reads.
 */

/** The words the lists below are made of, by kind of record and by what they mean. */
export const STATE_WORDS = {
  run: wordsOf('queued', 'running', 'done', 'error', 'cancelled'),
  server: wordsOf('running', 'provisioning', 'stopped', 'error', 'unreachable'),
  app: wordsOf('running', 'deploying', 'stopped', 'error'),
  backup: wordsOf('running', 'done', 'failed'),
  offsite: wordsOf('failed'),
  upgrade: wordsOf('requested', 'testing', 'standby', 'done', 'failed'),
  installer: wordsOf('running', 'stopped', 'error'),
};

/** Each word by itself (`{ done: 'done' }`), so that a list below names a word the table has. */
function wordsOf<const W extends string>(...words: W[]): { readonly [K in W]: K } {
  return Object.fromEntries(words.map((word) => [word, word])) as { readonly [K in W]: K };
}

/** Run states in which a run has failed (unless `retrying` is true). */
export const FAILED_RUN_STATES: readonly string[] = [STATE_WORDS.run.error];
/** Run states in which a run is still going. */
export const ACTIVE_RUN_STATES: readonly string[] = [STATE_WORDS.run.queued, STATE_WORDS.run.running];
/** Run states in which a run is over and fine. */
export const SUCCEEDED_RUN_STATES: readonly string[] = [STATE_WORDS.run.done];
/** Run states that end a run neither well nor in failure: known, and never alerted. */
export const OTHER_RUN_STATES: readonly string[] = [STATE_WORDS.run.cancelled];
/** Server states that make every app on the server unreliable to judge (inhibition sources). */
export const BAD_SERVER_STATES: readonly string[] = [
  STATE_WORDS.server.error,
  STATE_WORDS.server.unreachable,
  STATE_WORDS.server.stopped,
];
/** Server states that are fine: known, and never alerted. */
export const OTHER_SERVER_STATES: readonly string[] = [STATE_WORDS.server.running, STATE_WORDS.server.provisioning];
/** App states in which an app is not serving as it should (its URLs down until someone acts). */
export const BAD_APP_STATES: readonly string[] = [STATE_WORDS.app.error, STATE_WORDS.app.stopped];
/** App states that are fine: known, and never alerted. */
export const OTHER_APP_STATES: readonly string[] = [STATE_WORDS.app.running, STATE_WORDS.app.deploying];
/** Backup states in which a backup finished well: the only backups that count as taken. */
export const SUCCEEDED_BACKUP_STATES: readonly string[] = [STATE_WORDS.backup.done];
/** Backup states in which a backup is still being made. */
export const RUNNING_BACKUP_STATES: readonly string[] = [STATE_WORDS.backup.running];
/** Backup states in which a backup failed. */
export const FAILED_BACKUP_STATES: readonly string[] = [STATE_WORDS.backup.failed];
/** Off-site copy states meaning the last transfer failed. */
export const FAILED_OFFSITE_STATES: readonly string[] = [STATE_WORDS.offsite.failed];
/** Upgrade states in which a version upgrade failed. */
export const FAILED_UPGRADE_STATES: readonly string[] = [STATE_WORDS.upgrade.failed];
/** Upgrade states in which a version upgrade waits in standby (the app's restarts and updates are refused). */
export const STANDBY_UPGRADE_STATES: readonly string[] = [STATE_WORDS.upgrade.standby];
/**
 * Upgrade states of an upgrade under way: each is a step the platform moves on from by itself, so
 * one that stays longer than `checks.upgrades.stuck_max_duration` is stuck.
 */
export const UNDER_WAY_UPGRADE_STATES: readonly string[] = [STATE_WORDS.upgrade.requested, STATE_WORDS.upgrade.testing];
/** Upgrade states of an upgrade over and fine: known, and never alerted. */
export const OTHER_UPGRADE_STATES: readonly string[] = [STATE_WORDS.upgrade.done];
/** Marketplace service (installer) states in which a service is in trouble. */
export const BAD_INSTALLER_STATES: readonly string[] = [STATE_WORDS.installer.error];
/**
 * Marketplace service states in which a service is stopped: a stop on purpose is brief (a restart,
 * a change of plan), so one is alerted only once it has lasted `checks.installers.stopped_for`.
 */
export const STOPPED_INSTALLER_STATES: readonly string[] = [STATE_WORDS.installer.stopped];
/** Marketplace service states that need no alert: known, and never alerted. */
export const OTHER_INSTALLER_STATES: readonly string[] = [STATE_WORDS.installer.running];
