/**
 * The state vocabularies of the simulated service, in one place.
 *
 * The reference leaves the values of app, run, step, backup, server, installer, URL and upgrade
 * `state` strings open ("not shown"). The simulator uses the plausible values below. The API client
 * makes no assumption about them; the watch engine takes the ones it needs from configuration
 * (`checks.*`), whose defaults are these, so pointing the daemon at a service with other words is a
 * configuration change, not a code change.
 */
export const VOCABULARY = {
  run: {
    /** Waiting for a worker. */
    queued: 'queued',
    running: 'running',
    /** Finished successfully. */
    done: 'done',
    /** Failed; `retrying` true means an automatic retry of the failed step is due (not failed yet). */
    error: 'error',
    cancelled: 'cancelled',
  },
  step: { pending: 'pending', running: 'running', done: 'done', error: 'error', skipped: 'skipped' },
  app: { running: 'running', stopped: 'stopped', deploying: 'deploying', error: 'error', deleted: 'deleted', disabled: 'disabled' },
  backup: { running: 'running', done: 'done', failed: 'failed' },
  offsite: { uploaded: 'uploaded', uploading: 'uploading', failed: 'failed', deleted: 'deleted' },
  server: { running: 'running', provisioning: 'provisioning', stopped: 'stopped', error: 'error', unreachable: 'unreachable', deleted: 'deleted' },
  installer: { running: 'running', stopped: 'stopped', error: 'error', deleted: 'deleted' },
  url: { active: 'active', pending: 'pending', error: 'error' },
  upgrade: { requested: 'requested', testing: 'testing', standby: 'standby', done: 'done', failed: 'failed' },
} as const;

/** Run states in which a run has failed (unless `retrying` is true). */
export const FAILED_RUN_STATES: readonly string[] = [VOCABULARY.run.error];
/** Run states in which a run is still going. */
export const ACTIVE_RUN_STATES: readonly string[] = [VOCABULARY.run.queued, VOCABULARY.run.running];
/** Run states in which a run is over and fine. */
export const SUCCEEDED_RUN_STATES: readonly string[] = [VOCABULARY.run.done];
/** Server states that make every app on the server unreliable to judge (inhibition sources). */
export const BAD_SERVER_STATES: readonly string[] = [VOCABULARY.server.error, VOCABULARY.server.unreachable, VOCABULARY.server.stopped];
/** Off-site copy states meaning the last transfer failed. */
export const FAILED_OFFSITE_STATES: readonly string[] = [VOCABULARY.offsite.failed];
