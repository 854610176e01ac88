/**
 * `deploy-watchdog migrate-state --from FILE`: moves a SQLite state into the PostgreSQL database
 * the config's `state.url` names, so the daemons that start on it carry on where the file left off
 * (open alerts not announced again, the outbox delivered, silences and the remediation trail kept).
 *
 * The file is brought to this release's schema in place, as the daemon of this release would do at
 * its next start, so it stays a state this release can run on again (the way back); it is held with
 * the runner lease for the whole copy, as `run` and `check` hold it, so no daemon starts on it
 * meanwhile and one still running is refused. The copy itself is `copyState`: one transaction.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfigSection } from '../config/load-config.js';
import { openState } from '../state/open-state.js';
import { LeaseHeldError, openClaimed, type RunnerLease } from '../state/runner-lease.js';
import { copyState, ReplicasRunningError, TargetNotEmptyError, type StateCopy } from '../state/state-copy.js';
import { Store } from '../state/store.js';
import { EXIT, print, UsageError } from './command.js';
import { defineCommand, reportFailure, table } from './cli-helpers.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog migrate-state [--config FILE] --from FILE [--replace]

Copies the SQLite state FILE (a daemon's state.path) into the PostgreSQL database the config's
state.url names: every table, with its ids, in one transaction (all of it or nothing). Stop every
daemon on FILE and every replica on the database first: either still running is refused. FILE is
migrated to this release's schema in place (as this release's daemon would) and otherwise left as
it was. Prints the rows copied per table. Only the variables of state must be set.

  --config FILE   the configuration file, with state.url
                  (${CONFIG_FILE_DEFAULTS})
  --from FILE     the SQLite state to copy
  --replace       the database already holds a state: delete it and put the copy in its place
                  (without it, such a database is refused)`;

const migrateState = defineCommand({
  usage,
  options: { from: { type: 'string' }, replace: { type: 'boolean' } },
  parse: ({ values }) => {
    if (values.from === undefined || values.from === '') throw new UsageError('--from FILE is required');
    return { from: values.from, replace: values.replace === true };
  },
  async run({ from, replace }, io, file) {
    let source: Store | undefined;
    let target: Store | undefined;
    let lease: RunnerLease | undefined;
    let copying = false;
    try {
      // The state section only: the API token and the channels' secrets need not be set here.
      const state = loadConfigSection(file, io.env, 'state');
      if (state.url === undefined) {
        throw new UsageError(
          `${file} has no state.url: give the PostgreSQL database to copy into as state.url (postgres://…; ` +
            'the daemons then run on it), not state.path',
        );
      }
      if (!fs.existsSync(from)) throw new UsageError(`--from ${from}: no such file`);
      // Claimed before a migration too: never migrate the file under a daemon still on it.
      ({ store: source, lease } = openClaimed('migrate-state', (claim) =>
        Store.open(from, { mustExist: true, ...claim }),
      ));
      target = openState(state);
      const started = performance.now();
      copying = true;
      const copy = copyState(source, target, { replace });
      return print(io.stdout, report(source.path, target.path, copy, performance.now() - started));
    } catch (err) {
      // Refusals that need no usage: who holds the file or leads on the target, what it holds, and what to do.
      const refused =
        err instanceof LeaseHeldError || err instanceof ReplicasRunningError || err instanceof TargetNotEmptyError;
      const code = refused ? print(io.stderr, `error: ${err.message}\n`, EXIT.usage) : reportFailure(io, usage, err);
      // Said in so many words: the one transaction rolled back, so running it again is safe.
      if (copying && target)
        io.stderr.write(`nothing was copied: ${target.path} is as it was; run this again once that is fixed\n`);
      return code;
    } finally {
      lease?.release();
      target?.close();
      source?.close();
    }
  },
});

/** What was copied, table by table, and what comes next. */
function report(from: string, to: string, copy: StateCopy, ms: number): string {
  const total = copy.tables.reduce((n, t) => n + t.rows, 0);
  const rows = copy.tables.map((t) => [`  ${t.table}`, String(t.rows)]);
  const replaced =
    copy.replaced.length === 0
      ? ''
      : `It replaced the state the database held (${copy.replaced.map((t) => `${t.rows} ${t.table}`).join(', ')}).\n`;
  return (
    `copied ${from} into ${to} (schema version ${copy.schemaVersion}) in one transaction, in ${(ms / 1000).toFixed(1)} s:\n` +
    table([['  TABLE', 'ROWS'], ...rows, ['  total', String(total)]]) +
    replaced +
    `Start the daemons with this config (state.url). ${from} is left as it was (at schema version ${copy.schemaVersion}), to go back to.\n`
  );
}

export default migrateState;
