/**
 * What the token can read, learned at start and on reload and said once (the log, the console's
 * sources page), against the simulator: a token whose reads by id of production are refused while
 * the lists show production (reference §5.4), a role that hides production altogether, and the
 * admin token that sees everything. A handful of requests, never fatal.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import { parseTokenVisibility, TOKEN_VISIBILITY_KEY } from '../../src/collectors/token-visibility.js';
import type { SimTokenSpec } from '../../packages/simulator/src/token-grants.js';
import { freePort } from '../console/console-fixture.js';
import { captureLogger, engineConfig, manualSim, openWatchdog, tempDir } from './fixtures.js';

const NO_PROD_BY_ID = 'token-no-production-by-id';
const NO_PROD = 'token-without-production';
const TOKENS: SimTokenSpec[] = [
  { token: NO_PROD_BY_ID, namespaces: '*', permissions: '*', readByIdEnvironments: ['staging', 'development'] },
  { token: NO_PROD, namespaces: '*', permissions: '*', readEnvironments: ['staging', 'development'] },
];
const BY_ID =
  'this token cannot read production records by id; failed production runs are told from the list alone, without their steps';
const HIDDEN =
  "this token lists no production app: if the estate has one, the token's role hides it and nothing there is watched";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A started daemon with its console, on `token` (the admin token when undefined). */
async function daemon(token?: string) {
  const { sim, clock } = await manualSim({ tokens: TOKENS });
  const tmp = tempDir();
  const port = await freePort();
  const log = captureLogger('info');
  const config = engineConfig(sim, tmp.dir, '', token ?? sim.adminToken, undefined, `{ listen: "127.0.0.1:${port}" }`);
  const wd: Watchdog = openWatchdog(config, clock, { logger: log.logger });
  cleanups.push(async () => {
    await wd.stop(1_000);
    await sim.close();
    tmp.cleanup();
  });
  return { sim, wd, log, config, sources: () => fetch(`http://127.0.0.1:${port}/sources`).then((r) => r.text()) };
}

const said = (log: ReturnType<typeof captureLogger>, msg: string) => log.lines().filter((l) => l.msg === msg).length;

describe('what the token can read', () => {
  it.each([
    ['reads by id of production refused, the lists showing it', NO_PROD_BY_ID, [BY_ID], 'listed; reads by id refused'],
    ['a role that hides production', NO_PROD, [HIDDEN], 'no app listed'],
  ])('%s: said once in the log and on the sources page, and again on reload', async (_what, token, limits, row) => {
    const d = await daemon(token);
    await d.wd.start();
    const seen = parseTokenVisibility(d.wd.store.getMeta(TOKEN_VISIBILITY_KEY))!;
    expect(seen.limits).toEqual(limits);
    expect(seen.levels).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'operator' })]));
    for (const limit of limits) expect(said(d.log, limit)).toBe(1);
    const page = await d.sources();
    for (const limit of limits) expect(page).toContain(limit.replace("'", '&#39;'));
    expect(/<tr><td>production<\/td><td>([^<]*)<\/td><\/tr>/.exec(page)?.[1]).toBe(row);

    await d.wd.reload(d.config);
    for (const limit of limits) expect(said(d.log, limit)).toBe(2);
  });

  it('the admin token: nothing hidden, and learned with a handful of requests', async () => {
    const d = await daemon();
    d.sim.control.resetRequests();
    await d.wd.start();
    const seen = parseTokenVisibility(d.wd.store.getMeta(TOKEN_VISIBILITY_KEY))!;
    expect(seen.limits).toEqual([]);
    expect(seen.environments.map((e) => [e.type, e.listed, e.readById])).toEqual([
      ['production', true, 'allowed'],
      ['staging', true, 'allowed'],
      ['development', true, 'allowed'],
    ]);
    const probe = d.sim.control
      .requests()
      .filter((r) => r.fn === 'apps.get' || (r.fn === 'apps.list' && r.query.includes('environment_type')));
    expect(probe.length).toBeLessThanOrEqual(6);
    expect(await d.sources()).toContain('It reads every environment it lists, by id too.');
  });

  it('is never fatal: a probe whose reads fail leaves its part unknown and the daemon starts', async () => {
    const d = await daemon(NO_PROD_BY_ID);
    d.sim.control.setFault('apps.get', { errorCode: 'internal_error' });
    await d.wd.start();
    const seen = parseTokenVisibility(d.wd.store.getMeta(TOKEN_VISIBILITY_KEY))!;
    expect(seen.environments.every((e) => e.readById === 'unknown')).toBe(true);
    expect(seen.limits).toEqual([]);
  });
});
