/**
 * Two daemons (`run`) on one PostgreSQL state, in this process against the simulator: one leads
 * and works, the other is a ready follower that runs nothing; each says which it is on /readyz and
 * in `deploy_watchdog_leader`; a reload keeps each role; a stop releases the lease, the follower
 * takes over at its next try, and runs at once only the jobs whose last slot is older than one
 * interval (the others were just run). A replica that takes over with another config than the last
 * leader's says so.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Watchdog } from '../../src/app/watchdog.js';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import { freePort } from '../helpers/free-port.js';
import { testCluster } from '../helpers/state-backends.js';
import { captureLogger, manualSim } from './fixtures.js';

const YEAR = 366 * 86_400_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A replica's config: the state in `url`, a 6s lease, its own listener; the runs and servers jobs
 * yearly, so that no tick comes during the test and every cycle is one the test caused. The lease
 * is long enough that a loaded machine's stalls (the leader must renew within three quarters of
 * it) never depose the leader mid-test; a stop releases it, so the handover does not wait on it.
 */
function replicaConfig(
  simUrl: string,
  token: string,
  url: string,
  port: number,
  notify = 'notify: { channels: [{ name: console, type: log }], routes: [{ channels: [console] }] }',
): Config {
  const text = [
    'api: { base_url: "${SIM_URL}", token: "${DMS_API_TOKEN}", requests_per_second: 1000, max_retries: 0, timeout: 5s }',
    'state: { url: "${DATABASE_URL}", leader: { lease: 6s } }',
    'jobs: { runs: "0 0 1 1 *", servers: "0 0 1 1 *", urls: "off", backups: "off", attention: "off", maintenance: "off", installers: "off", jitter: 0s }',
    notify,
    `server: { listen: "127.0.0.1:${port}" }`,
  ].join('\n');
  return parseConfig(text, { SIM_URL: simUrl, DMS_API_TOKEN: token, DATABASE_URL: url }, 'replica.yaml');
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/**
 * What `path` answers once it matches `check`: the listener answers from what the main thread
 * last published (readiness within a second of being asked, the role at its next heartbeat,
 * `/metrics` every second), so a change just logged shows there a moment later.
 */
async function settled(port: number, path: string, check: (answer: { status: number; body: string }) => void) {
  let last: { status: number; body: string } | undefined;
  await vi.waitFor(
    async () => {
      last = await get(port, path);
      check(last);
    },
    { timeout: 10_000, interval: 100 },
  );
  return last!;
}

const cycles = (log: ReturnType<typeof captureLogger>) =>
  log
    .lines()
    .filter((l) => l.msg === 'cycle complete')
    .map((l) => l.job as string);

/** What {@link openReplicas} opens. */
type Replicas = Awaited<ReturnType<typeof openReplicas>>;

/**
 * Two replicas, A and B, on a new database of the test cluster against a simulator of `sim`'s
 * size, each with its own listener and log; B's `notify` section is `notifyB` when given.
 * Neither is started.
 */
async function openReplicas(sim: { apps: number; seed: number }, notifyB?: string) {
  const cluster = testCluster();
  const { sim: simulator, clock } = await manualSim(sim);
  cleanups.push(() => simulator.close());
  const database = cluster.createDatabase();
  cleanups.push(() => cluster.dropDatabase(database));
  const url = cluster.url(database);
  const [portA, portB] = [await freePort(), await freePort()];
  const configA = replicaConfig(simulator.baseUrl, simulator.adminToken, url, portA);
  const configB = replicaConfig(simulator.baseUrl, simulator.adminToken, url, portB, notifyB);
  const logA = captureLogger('debug');
  const logB = captureLogger('debug');
  const a = Watchdog.open({ config: configA, clock, logger: logA.logger, lease: 'run' });
  const b = Watchdog.open({ config: configB, clock, logger: logB.logger, lease: 'run' });
  cleanups.push(() => a.stop(1_000).then(() => undefined));
  cleanups.push(() => b.stop(1_000).then(() => undefined));
  return { cluster, sim: simulator, url, portA, portB, logA, logB, a, b };
}

/** A starts and leads epoch 1 (its first cycles run), then B starts and follows it. */
async function leadThenFollow({ a, b, logA, logB }: Pick<Replicas, 'a' | 'b' | 'logA' | 'logB'>): Promise<void> {
  await a.start();
  await vi.waitFor(() => expect(logA.text()).toContain('became leader (epoch 1)'), { timeout: 10_000 });
  await vi.waitFor(() => expect(cycles(logA).sort()).toEqual(['runs', 'servers']), { timeout: 10_000 });
  await b.start();
  await vi.waitFor(() => expect(logB.lines().some((l) => l.msg === 'following' && l.epoch === 1)).toBe(true), {
    timeout: 10_000,
  });
}

describe('replicas on one PostgreSQL state', () => {
  it('one leads, the other follows ready; reloads keep the roles; a stop hands over at once; the new leader runs at once only the job its predecessor left behind', async () => {
    const { cluster, sim, url, portA, portB, logA, logB, a, b } = await openReplicas({ apps: 8, seed: 3 });

    await leadThenFollow({ a, b, logA, logB });

    await settled(portA, '/readyz', (readyA) => {
      expect(readyA.status).toBe(200);
      expect(JSON.parse(readyA.body)).toMatchObject({ status: 'ready', role: 'leader', epoch: 1 });
    });
    const readyB = await settled(portB, '/readyz', (ready) => {
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toMatchObject({ status: 'ready', role: 'follower', epoch: 1 });
    });
    const bodyB = JSON.parse(readyB.body) as { role: string; epoch: number; checks: { check: string }[] };
    // A follower runs no job: it answers for the lease and the state it serves the console from.
    expect(bodyB.checks.map((c) => c.check)).toEqual(['leader', 'state']);
    expect((await get(portB, '/healthz')).status).toBe(200);
    await settled(portA, '/metrics', (m) => expect(m.body).toMatch(/^deploy_watchdog_leader 1$/m));
    await settled(portB, '/metrics', (m) => expect(m.body).toMatch(/^deploy_watchdog_leader 0$/m));

    // Reloads keep the roles: the leader runs its first cycles again, the follower none.
    await b.reload(replicaConfig(sim.baseUrl, sim.adminToken, url, portB));
    await a.reload(replicaConfig(sim.baseUrl, sim.adminToken, url, portA));
    await vi.waitFor(() => expect(cycles(logA)).toHaveLength(4), { timeout: 10_000 });
    await settled(portB, '/readyz', (r) => expect(JSON.parse(r.body)).toMatchObject({ role: 'follower', epoch: 1 }));
    await settled(portA, '/readyz', (r) => expect(JSON.parse(r.body)).toMatchObject({ role: 'leader', epoch: 1 }));
    expect(cycles(logB)).toEqual([]);

    // The servers job's last slot is long past (as if its predecessor had missed it); runs' is recent.
    a.store.transaction(() => a.store.setMeta('job_slot:servers', String(Date.now() - 2 * YEAR)));
    await a.stop(2_000);
    expect(logA.text()).toMatch(/"msg":"stepped down: stopping"/);
    await vi.waitFor(() => expect(logB.text()).toContain('became leader (epoch 2)'), { timeout: 10_000 });
    await vi.waitFor(() => expect(cycles(logB)).toEqual(['servers']), { timeout: 10_000 });
    expect(logB.lines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('taking over'))).toMatchObject({
      jobs: ['servers'],
    });
    await settled(portB, '/readyz', (r) =>
      expect(JSON.parse(r.body)).toMatchObject({ status: 'ready', role: 'leader', epoch: 2 }),
    );
    await settled(portB, '/metrics', (m) => expect(m.body).toMatch(/^deploy_watchdog_leader 1$/m));
    expect(Number(b.store.getMeta('job_slot:servers'))).toBeGreaterThan(Date.now() - 60_000);
    // Nothing of the handover was a fault (the log channel's alerts are warnings of their own).
    const faults = [...logA.lines(), ...logB.lines()].filter((l) => (l.level as number) >= 40 && l.stage !== 'channel');
    expect(faults).toEqual([]);
    expect(logA.text() + logB.text()).not.toContain(cluster.password);
    // Two listeners' threads start through tsx's loader from the sources: seconds on a loaded machine.
  }, 90_000);

  it('a replica with another config than the leader says so as it follows and as it takes over; a reload of the leader does not', async () => {
    // Another route: while B leads, its alerts reach its channels only.
    const otherNotify =
      'notify: { channels: [{ name: console, type: log }, { name: audit, type: log }], routes: [{ channels: [audit] }] }';
    const { sim, url, portA, logA, logB, a, b } = await openReplicas({ apps: 4, seed: 5 }, otherNotify);
    const differs = (log: ReturnType<typeof captureLogger>) =>
      log.lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('leading with a config other than'));

    await leadThenFollow({ a, b, logA, logB });
    // Seen by the follower at once, before a failover puts its config to work.
    const besides = logB.lines().filter((l) => typeof l.msg === 'string' && l.msg.startsWith("this replica's config"));
    expect(besides).toMatchObject([{ level: 40, lastEpoch: 1 }]);
    expect(besides[0]!.msg).toContain("differs from the leader's (epoch 1)");
    // The leader's own reload to another config is the config it now runs with, said by the reload alone.
    await a.reload(replicaConfig(sim.baseUrl, sim.adminToken, url, portA, otherNotify));
    await a.reload(replicaConfig(sim.baseUrl, sim.adminToken, url, portA));
    expect(differs(logA)).toEqual([]);

    await a.stop(2_000);
    await vi.waitFor(() => expect(logB.text()).toContain('became leader (epoch 2)'), { timeout: 10_000 });
    expect(differs(logB)).toMatchObject([{ level: 40, epoch: 2, lastEpoch: 1 }]);
    expect(differs(logB)[0]!.msg).toContain('(epoch 1)');
  }, 90_000);
});
