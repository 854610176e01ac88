/**
 * An upgrade is one way: once this release has migrated a state, the release before refuses it.
 * So only the daemon (`run`, `check`) and `migrate-state` take a state on to this release's
 * schema; a command that reads or annotates one (`alerts`, `silences`, `ack`…) refuses a state an
 * older release wrote, says what to do and leaves it as it was. Otherwise a look at the alerts with
 * the new release, installed beside the old daemon or before a rollback, would migrate the state
 * under that daemon and leave the old release unable to start on it. So would a new `run` started
 * before the old daemon stopped, were it to migrate before it found the state taken.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Watchdog } from '../../src/app/watchdog.js';
import { loadConfig } from '../../src/config/load-config.js';
import { silentLogger } from '../../src/lib/logger.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { claimLease, LeaseHeldError } from '../../src/state/runner-lease.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

/** The last migration of the release of 2026-11-24 (Slack buttons): a state in the field. */
const OLDER = 11;
const CURRENT = ALL_MIGRATIONS.at(-1)!.version;
const OLDER_MIGRATIONS = ALL_MIGRATIONS.filter((m) => m.version <= OLDER);

describe.each(STATE_BACKENDS)('a state an older release wrote, on $name', (backend) => {
  const states: TestState[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const s of states.splice(0)) s.cleanup();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A state the older release left, and a config naming it (the SQLite file by its absolute path). */
  function olderState(): { state: TestState; config: string } {
    const state = backend.fresh();
    states.push(state);
    state.open({ migrations: OLDER_MIGRATIONS }).close();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-older-'));
    dirs.push(dir);
    const where = backend.engine === 'sqlite' ? `state: { path: ${JSON.stringify(state.config.path)} }` : state.yaml;
    return { state, config: writeConfig(dir, ['api: { base_url: "http://127.0.0.1:9", token: x }', where]) };
  }

  const versionOf = (state: TestState) => state.open({ migrations: OLDER_MIGRATIONS }).schemaVersion();

  it.each([['alerts'], ['silences'], ['ack', 'abc123', '--by', 'alice']])(
    '`%s` refuses it, says what to do, and leaves it at its version',
    async (...command) => {
      const { state, config } = olderState();
      const result = await runCli([...command, '--config', config]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`schema version ${OLDER} is older than this deploy-watchdog's (${CURRENT})`);
      expect(result.stderr).toContain('`deploy-watchdog run` of this version migrates it');
      expect(versionOf(state)).toBe(OLDER);
    },
  );

  it('the daemon takes it on to this release', () => {
    const { state } = olderState();
    expect(state.open().schemaVersion()).toBe(CURRENT);
  });

  it.runIf(backend.engine === 'sqlite')(
    'a `run` started while the older daemon still works on it is refused before it migrates',
    () => {
      const { state, config } = olderState();
      const older = claimLease(state.open({ migrations: OLDER_MIGRATIONS }), 'run');
      const open = () => Watchdog.open({ config: loadConfig(config, {}), lease: 'run', logger: silentLogger });
      expect(open).toThrow(LeaseHeldError);
      expect(versionOf(state)).toBe(OLDER);
      older.release();
      open().store.close();
      expect(state.open().schemaVersion()).toBe(CURRENT);
    },
  );

  it.runIf(backend.engine === 'sqlite')(
    '`migrate-state` from it while the older daemon still works on it is refused before it migrates',
    async () => {
      const { state } = olderState();
      const older = claimLease(state.open({ migrations: OLDER_MIGRATIONS }), 'run');
      const target = STATE_BACKENDS[1]!.fresh();
      states.push(target);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-older-'));
      dirs.push(dir);
      const config = writeConfig(dir, ['api: { base_url: "http://127.0.0.1:9", token: x }', target.yaml]);
      const result = await runCli(['migrate-state', '--config', config, '--from', state.config.path!]);
      expect(result.stderr).toContain('is working on this state file');
      expect(versionOf(state)).toBe(OLDER);
      older.release();
    },
  );
});
