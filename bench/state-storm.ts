/**
 * A storm through the state: `--alerts` new alerts in one cycle of one job, through the lifecycle
 * and the outbox (on `--channels` channels) in the cycle's one transaction, as the daemon commits
 * it; then the same findings again (nothing new), then all of them resolved. On SQLite and on a
 * throwaway PostgreSQL (durable, as `cycle-bench.ts` starts it).
 *
 * Why: on PostgreSQL the main thread is blocked for every statement whose answer it waits for, so
 * a storm's transaction takes seconds; a leader renews its lease meanwhile, aside, between the
 * transaction's statements (`LeaderElection.keepUp`), and its console and delivery wait for it.
 *
 *   npm run bench:state-storm                       # 10,000 alerts, 2 channels, SQLite and PostgreSQL
 *   npm run bench:state-storm -- --alerts 5000 --states postgres
 *
 * One JSON line per state on stdout (`state`, `alerts`, `channels`, `fire_ms`, `again_ms`,
 * `resolve_ms`); a table on stderr.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Secret } from '../src/lib/secret.js';
import { openState } from '../src/state/open-state.js';
import type { StateConfig } from '../src/config/load-config.js';
import type { StateBackend } from '../test/helpers/state-backends.js';
import { postgresBinaries, startPostgres, type PostgresCluster } from '../test/helpers/postgres.js';
import { finding, Harness, MINUTE } from '../test/notify/notify-fixture.js';

const { values } = parseArgs({
  options: {
    alerts: { type: 'string', default: '10000' },
    channels: { type: 'string', default: '2' },
    states: { type: 'string', default: 'sqlite,postgres' },
  },
});
const alerts = Number(values.alerts);
const channelCount = Number(values.channels);
const states = values.states.split(',');

const TIMEOUTS = {
  retention: 30 * 86_400_000,
  connect_timeout: 10_000,
  statement_timeout: 60_000,
  leader: { lease: 10_000 },
};

/** A state in a temp directory or a database of `cluster`, opened as the daemon opens its own. */
function backend(engine: 'sqlite' | 'postgres', cluster: PostgresCluster | undefined): StateBackend {
  return {
    name: engine === 'sqlite' ? 'SQLite' : 'PostgreSQL',
    engine,
    fresh() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-storm-'));
      const config = (
        cluster
          ? { ...TIMEOUTS, url: new Secret(cluster.url(cluster.createDatabase())) }
          : { ...TIMEOUTS, path: path.join(dir, 'state.db') }
      ) as StateConfig;
      const opened: { close(): void }[] = [];
      return {
        config,
        yaml: '',
        open: (options) => {
          const store = openState(config, options);
          opened.push(store);
          return store;
        },
        cleanup: () => {
          for (const s of opened.splice(0)) s.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

const rows: string[] = [];
for (const state of states) {
  if (state === 'postgres' && !postgresBinaries()) throw new Error('--states postgres needs PostgreSQL installed');
  const cluster = state === 'postgres' ? startPostgres({ durable: true }) : undefined;
  try {
    // Channels that are never sent to (the delivery round is not run): the pass is what is timed.
    const channels = Array.from({ length: channelCount }, (_, i) => ({
      name: `ch${i}`,
      type: 'slack',
      webhook_url: `http://127.0.0.1:9/ch${i}`,
    }));
    const h = Harness.open({ backend: backend(state as 'sqlite' | 'postgres', cluster), channels });
    const storm = Array.from({ length: alerts }, (_, i) => finding(`app-${i}`));
    const timed = (findings: typeof storm): number => {
      const started = performance.now();
      h.cycle('runs', findings);
      h.clock.advance(MINUTE);
      return Math.round(performance.now() - started);
    };
    const fire = timed(storm);
    const again = timed(storm);
    const resolve = timed([]);
    await h.close();
    const result = {
      state,
      alerts,
      channels: channelCount,
      fire_ms: fire,
      again_ms: again,
      resolve_ms: resolve,
    };
    console.log(JSON.stringify(result));
    rows.push(`| ${state} | ${alerts} | ${channelCount} | ${fire} | ${again} | ${resolve} |`);
  } finally {
    cluster?.close();
  }
}
console.error(
  ['| state | alerts | channels | fire ms | again ms | resolve ms |', '|---|---|---|---|---|---|', ...rows].join('\n'),
);
