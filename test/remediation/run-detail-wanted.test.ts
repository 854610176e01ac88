/**
 * The failed runs a remediation policy waits on for their detail: as a table of policies and list
 * labels, then through the real daemon at scale: 200 runs failing at once with the reason a policy
 * matches are all read by id, and all decided, in the one cycle that announces them.
 */
import { describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import { DETAIL_READS_PER_CYCLE } from '../../src/collectors/collect-runs.js';
import { parseConfig } from '../../src/config/load-config.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { compilePolicies } from '../../src/remediation/policy.js';
import { listAttempts } from '../../src/remediation/remediation-store.js';
import { runDetailWanted } from '../../src/remediation/run-detail-wanted.js';
import { engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';

const STAGING = { check: 'failed_runs', namespace: 'acme', environment_type: 'staging', action: 'update' };
const PRODUCTION = { ...STAGING, environment_type: 'production' };

/** The predicate for one `remediation` section (YAML, indented under it). */
function wantedFor(section: string) {
  const config = parseConfig(
    `api: { base_url: "http://127.0.0.1:1", token: t }\nremediation:\n${section}\n`,
    {},
    'test.yaml',
  );
  return runDetailWanted(compilePolicies(config.remediation), config.remediation.enabled);
}

const ON = '  enabled: true\n  policies:\n';
const policy = (fields: string) => `${ON}    - { name: p, action: runs.retry, ${fields} }`;

describe('runDetailWanted', () => {
  it.each([
    [
      'a policy on the reason, staging named',
      policy('match: { environment_type: staging }, match_re: { reason: "disk.*" }'),
      STAGING,
      true,
    ],
    [
      'the same, another environment',
      policy('match: { environment_type: staging }, match_re: { reason: "disk.*" }'),
      { ...STAGING, environment_type: 'development' },
      false,
    ],
    ['production not named: its guard', policy('match_re: { reason: "disk.*" }'), PRODUCTION, false],
    [
      'production named',
      policy('match: { environment_type: production }, match_re: { reason: "disk.*" }'),
      PRODUCTION,
      true,
    ],
    ['on the step', policy('match: { step: migrate }'), STAGING, true],
    ['another action', policy('match: { action: restart }, match_re: { reason: "disk.*" }'), STAGING, false],
    [
      'a label the list does not say (the app): may match',
      policy('match: { app: shop }, match_re: { reason: "disk.*" }'),
      STAGING,
      true,
    ],
    [
      'a label the run leaves unknown (no project): may match',
      policy('match: { project: web }, match_re: { reason: "disk.*" }'),
      STAGING,
      true,
    ],
  ])('%s', (_what, section, labels, expected) => {
    expect(wantedFor(section)?.(labels)).toBe(expected);
  });

  it.each([
    ['no policy matches on the failed step', policy('match: { environment_type: staging }')],
    [
      'remediation is off',
      `  enabled: false\n  policies:\n    - { name: p, action: runs.retry, match_re: { reason: "disk.*" } }`,
    ],
    ['the policy acts only when asked', policy('automatic: false, match_re: { reason: "disk.*" }')],
    [
      'the policy acts on apps',
      policy('action: apps.backup, match_re: { reason: "disk.*" }').replace('action: runs.retry, ', ''),
    ],
  ])('waits on nothing when %s', (_what, section) => {
    expect(wantedFor(section)).toBeUndefined();
  });
});

const REMEDIATION = `
remediation:
  enabled: true
  dry_run: false
  max_actions_per_hour: 1000
  policies:
    - { name: retry-disk, action: runs.retry, match: { environment_type: [staging, development] }, match_re: { reason: "disk full.*" }, max_attempts: 1 }
`;

describe('a reason-matching policy in a storm', () => {
  it('decides on 200 failed runs in the cycle that announces them; the others stay bounded', async () => {
    const { sim, clock } = await manualSim({ apps: 400, seed: 5 });
    const tmp = tempDir();
    const wd: Watchdog = openWatchdog(engineConfig(sim, tmp.dir, REMEDIATION), clock);
    try {
      await stormOf200(sim, clock, wd);
    } finally {
      await wd.stop(0);
      await sim.close();
      tmp.cleanup();
    }
  }, 60_000);
});

/** The storm: 200 failures a policy waits on, 60 in production it may not touch; one cycle. */
async function stormOf200(sim: RunningSimulator, clock: ManualClock, wd: Watchdog): Promise<void> {
  const running = [...sim.control.state.apps.values()].filter((a) => a.state === 'running' && a.deployedAt !== null);
  const nonProd = running.filter((a) => a.envType !== 'production');
  const prod = running.filter((a) => a.envType === 'production');
  expect(nonProd.length).toBeGreaterThanOrEqual(200);
  expect(prod.length).toBeGreaterThanOrEqual(60);
  // The memory warm: the next cycle reads what changed.
  await wd.runOnce(['runs']);
  clock.advance(MINUTE);
  await wd.runOnce(['runs']);

  const reason = 'disk full on /var/lib/app';
  const storm = nonProd
    .slice(0, 200)
    .map((app) => sim.control.addRun({ appId: app.id, action: 'update', state: 'error', reason }).id);
  // Production failures no policy may act on: read by id within the usual bound only.
  const others = prod
    .slice(0, 60)
    .map((app) => sim.control.addRun({ appId: app.id, action: 'update', state: 'error', reason }).id);
  clock.advance(MINUTE);
  sim.control.resetRequests();
  await wd.runOnce(['runs']);

  const readById = new Set(
    sim.control
      .requests()
      .filter((r) => r.fn === 'runs.get')
      .map((r) => Number(r.path.split('/').at(-1))),
  );
  expect(storm.filter((id) => !readById.has(id))).toEqual([]);
  expect(others.filter((id) => readById.has(id)).length).toBeLessThanOrEqual(DETAIL_READS_PER_CYCLE);
  // Every one of the 200 decided in this cycle: an attempt planned with its key.
  const planned = new Set(listAttempts(wd.store).map((a) => a.recordId));
  expect(storm.filter((id) => !planned.has(id))).toEqual([]);
  expect(others.filter((id) => planned.has(id))).toEqual([]);
  // And every failure announced in that cycle, the production ones from their list items.
  const fired = new Set(
    (
      wd.store.db
        .prepare(`SELECT fingerprint FROM events WHERE kind = 'firing' AND fingerprint LIKE 'failed_runs/run/%'`)
        .all() as { fingerprint: string }[]
    ).map((r) => Number(r.fingerprint.split('/').at(-1))),
  );
  expect([...storm, ...others].filter((id) => !fired.has(id))).toEqual([]);
}
