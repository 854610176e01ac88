/**
 * Contract tests of the API client against the simulator over loopback: every function of the
 * catalogue succeeds through its resource method, and every error code of reference §7 that a
 * function can raise comes back as an ApiError with that code, the code's status and the function's
 * name — driven naturally where the simulator can (tokens, permissions, control helpers), and with
 * an injected fault for the rest.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ChangeOptions } from '../../src/api/client.js';
import { ApiError, ApiUsageError } from '../../src/api/errors.js';
import { FUNCTION_LIST, FUNCTIONS, errorsOf, type FunctionName } from '../../src/api/functions.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/api/schemas.js';
import { Secret } from '../../src/lib/secret.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { PLANS_WITH_LOGS, VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import type { AppRec } from '../../packages/simulator/src/sim-state.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';

const WHOAMI_ONLY = 'tok-whoami-only';
const DEV_CHANGES = 'tok-dev-changes';
const sim = await useSimulator({
  apps: 80,
  seed: 1,
  clock: new ManualClock('2026-11-01T12:00:00Z'),
  tokens: [
    { token: WHOAMI_ONLY, namespaces: '*', permissions: ['workspace: read'] },
    { token: DEV_CHANGES, namespaces: '*', permissions: '*', changeEnvironments: ['development'] },
  ],
});
const clients: ApiClient[] = [];
/** A client with no retries, so one call is one request and refusals come back as they are. */
const clientFor = (token: string) => {
  const c = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(token),
    clock: new JumpingClock(),
    maxRetries: 0,
    timeoutMs: 5_000,
  });
  clients.push(c);
  return c;
};
const admin = clientFor(sim.adminToken);
afterAll(() => Promise.all(clients.map((c) => c.close())));
afterEach(() => {
  sim.control.clearFaults();
  sim.control.setWritesDisabled(false);
});

// ---- fixtures: records picked from the seed, deterministically --------------------------------

const state = sim.control.state;
const busyApps = new Set([...state.activeRuns].map((id) => state.runs.get(id)!.appId));
/** Apps free for a change: running, no upgrade, no run under way. Each test takes its own. */
const pool = [...state.apps.values()].filter(
  (a) => a.state === VOCABULARY.app.running && !a.upgrade && !busyApps.has(a.id),
);
const take = (envType?: AppRec['envType']): AppRec => {
  const i = pool.findIndex((a) => envType === undefined || a.envType === envType);
  if (i < 0) throw new Error(`no free ${envType ?? ''} app left in the pool`);
  return pool.splice(i, 1)[0]!;
};
const first = <T>(m: ReadonlyMap<number, T>, keep: (v: T) => boolean = () => true): T => {
  for (const v of m.values()) if (keep(v)) return v;
  throw new Error('no such record in the seed');
};
const serverOk = (serverId: number | null) =>
  serverId !== null && state.servers.get(serverId)!.state === VOCABULARY.server.running;
const logsApp = first(
  state.apps,
  (a) => PLANS_WITH_LOGS.includes(state.projectOf(a).plan) && serverOk(a.serverId) && a.state === 'running',
);
const starterApp = first(state.apps, (a) => !PLANS_WITH_LOGS.includes(state.projectOf(a).plan));
const standbyApp = first(state.apps, (a) => a.upgrade?.state === VOCABULARY.upgrade.standby);
const restorePointApp = first(state.restorePoints).appId;

/** The records one invocation works on. */
interface Targets {
  appId: number;
  runId: number;
  backupId: number;
  serverId: number;
  projectId: number;
  installerId: number;
}
const defaults: Targets = {
  appId: first(state.apps).id,
  runId: first(state.runs).id,
  backupId: first(state.backups).id,
  serverId: first(state.servers).id,
  projectId: first(state.projects).id,
  installerId: first(state.installers).id,
};
const key = (): ChangeOptions => ({ idempotencyKey: randomUUID() });

/** How each function of the catalogue is called through its resource method. A new function is a compile error here. */
const INVOKE: Record<FunctionName, (c: ApiClient, t: Targets) => Promise<unknown>> = {
  'apps.get': (c, t) => c.apps.get(t.appId),
  'apps.list': (c) => c.apps.list({ limit: 5 }),
  'attention.list': (c) => c.attention.list(),
  'backups.get': (c, t) => c.backups.get(t.backupId),
  'backups.list': (c) => c.backups.list({ limit: 5 }),
  'installers.get': (c, t) => c.installers.get(t.installerId),
  'installers.list': (c) => c.installers.list(),
  'logs.tail': (c) => c.logs.tail(logsApp.id, { since: '1h', limit: 20 }),
  'projects.get': (c, t) => c.projects.get(t.projectId),
  'projects.list': (c) => c.projects.list(),
  'restore_points.list': (c) => c.restorePoints(restorePointApp).list(),
  'runs.get': (c, t) => c.runs.get(t.runId),
  'runs.list': (c) => c.runs.list({ limit: 5 }),
  'servers.get': (c, t) => c.servers.get(t.serverId),
  'servers.list': (c) => c.servers.list(),
  'urls.list': (c) => c.urls.list({ limit: 5 }),
  whoami: (c) => c.whoami(),
  'apps.backup': (c, t) => c.apps.backup(t.appId, { format: 'dump' }, key()),
  'apps.maintenance': (c, t) => c.apps.maintenance(t.appId, { on: true }, key()),
  'apps.restart': (c, t) => c.apps.restart(t.appId, key()),
  'apps.update': (c, t) => c.apps.update(t.appId, { quick: true, modules: 'none' }, key()),
  'apps.update_modules': (c, t) => c.apps.updateModules(t.appId, { modules: 'sale,stock', backup: false }, key()),
  'runs.retry': (c, t) => c.runs.retry(t.runId, { now: true }, key()),
};

/** The record a `.get` function answers, by the target it was asked for. */
const GET_TARGET: Partial<Record<FunctionName, keyof Targets>> = {
  'apps.get': 'appId',
  'runs.get': 'runId',
  'backups.get': 'backupId',
  'servers.get': 'serverId',
  'projects.get': 'projectId',
  'installers.get': 'installerId',
};

/** Calls and returns the thrown error (fails the test when the call succeeds). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

/** Asserts an ApiError with this code, the code's status and the function's name. */
function expectRefusal(err: unknown, fn: string, code: ErrorCode): void {
  expect(err).toBeInstanceOf(ApiError);
  expect(err).toMatchObject({ fn, code, status: ERROR_STATUS[code] });
  expect((err as Error).message).toContain(fn);
}

describe('every function succeeds through its resource method', () => {
  it.each(FUNCTION_LIST.map((s) => [s.name, s] as const))('%s', async (_name, spec) => {
    const t: Targets = { ...defaults };
    if (spec.kind === 'change') t.appId = take().id;
    if (spec.name === 'runs.retry') t.runId = sim.control.addRun({ appId: take().id, state: 'error' }).id;
    sim.control.resetRequests();

    const answer = (await INVOKE[spec.name as FunctionName](admin, t)) as Record<string, unknown>;

    // One request, answered 200, for this very function.
    expect(sim.control.requests().map((r) => [r.fn, r.status])).toEqual([[spec.name, 200]]);
    // The answer is the parsed payload: what the function's schema accepts, unwrapped from `data`.
    expect(spec.answer.safeParse(answer).success).toBe(true);
    if (spec.paged) expect((answer.items as unknown[]).length).toBeGreaterThan(0);
    if (spec.kind === 'change')
      expect(answer).toMatchObject({
        state: 'started',
        app_id: spec.name === 'runs.retry' ? expect.any(Number) : t.appId,
      });
    const idKey = GET_TARGET[spec.name as FunctionName];
    if (idKey) expect(answer.id).toBe(t[idKey]);
  });

  it('sends the idempotency key and a JSON body with each change', async () => {
    const app = take();
    sim.control.resetRequests();
    await admin.apps.backup(app.id, { format: 'zip' }, { idempotencyKey: 'contract-key-1' });
    expect(sim.control.requests()).toMatchObject([
      { fn: 'apps.backup', method: 'POST', status: 200, idempotencyKey: 'contract-key-1' },
    ]);
  });

  it('gets the stored answer again when a change is re-sent with the same key (the caller re-sends, not the client)', async () => {
    const app = take();
    const a = await admin.apps.restart(app.id, { idempotencyKey: 'contract-same' });
    const b = await admin.apps.restart(app.id, { idempotencyKey: 'contract-same' });
    expect(b).toEqual(a);
  });
});

describe('every error code a function can raise, injected', () => {
  const cases = FUNCTION_LIST.flatMap((spec) => errorsOf(spec).map((code) => [spec.name, code] as const));

  it.each(cases)('%s → %s', async (name, code) => {
    sim.control.setFault(name as FunctionName, { errorCode: code, times: 1 });
    const err = await failure(INVOKE[name as FunctionName](admin, defaults));
    expectRefusal(err, name, code);
  });
});

describe('error codes the simulator raises by itself', () => {
  const reads = FUNCTION_LIST.filter((s) => s.kind === 'read');
  const changes = FUNCTION_LIST.filter((s) => s.kind === 'change');
  const appChanges = changes.filter((s) => s.name.startsWith('apps.'));

  it.each(FUNCTION_LIST.map((s) => s.name))(
    'invalid_token: %s with a token the service does not know',
    async (name) => {
      const err = await failure(INVOKE[name as FunctionName](clientFor('tok-unknown'), defaults));
      expectRefusal(err, name, 'invalid_token');
    },
  );

  it.each(FUNCTION_LIST.filter((s) => s.name !== 'whoami').map((s) => s.name))(
    'function_not_allowed: %s with a token that holds only whoami',
    async (name) => {
      const err = await failure(INVOKE[name as FunctionName](clientFor(WHOAMI_ONLY), defaults));
      expectRefusal(err, name, 'function_not_allowed');
    },
  );

  it.each(changes.map((s) => s.name))(
    'access_denied: %s on a production app with a token that changes development only',
    async (name) => {
      const app = take('production');
      const t = { ...defaults, appId: app.id, runId: sim.control.addRun({ appId: app.id, state: 'error' }).id };
      const err = await failure(INVOKE[name as FunctionName](clientFor(DEV_CHANGES), t));
      expectRefusal(err, name, 'access_denied');
    },
  );

  it.each(FUNCTION_LIST.filter((s) => s.path.includes('{id}')).map((s) => s.name))(
    'not_found: %s with an id nobody has',
    async (name) => {
      const missing = 9_999_999;
      const t: Targets = {
        appId: missing,
        runId: missing,
        backupId: missing,
        serverId: missing,
        projectId: missing,
        installerId: missing,
      };
      // logs.tail and restore_points.list take their app from fixtures; ask for the missing app instead.
      const err = await failure(
        name === 'logs.tail'
          ? admin.logs.tail(missing)
          : name === 'restore_points.list'
            ? admin.restorePoints(missing).list()
            : INVOKE[name as FunctionName](admin, t),
      );
      expectRefusal(err, name, 'not_found');
    },
  );

  it.each(FUNCTION_LIST.filter((s) => 'namespace' in s.query).map((s) => s.name))(
    'namespace_not_found: %s with a namespace the token does not reach',
    async (name) => {
      const err = await failure(admin.call(name as 'apps.list', { query: { namespace: 'no-such-namespace' } }));
      expectRefusal(err, name, 'namespace_not_found');
    },
  );

  it.each(reads.filter((s) => s.paged).map((s) => s.name))(
    'invalid_parameter: %s with a limit above the maximum',
    async (name) => {
      const err = await failure(
        admin.call(name as 'apps.list', {
          id: name === 'restore_points.list' ? restorePointApp : undefined,
          query: { limit: 50_000 },
        }),
      );
      expectRefusal(err, name, 'invalid_parameter');
    },
  );

  it.each(changes.map((s) => s.name))('writes_disabled: %s while the service refuses changes', async (name) => {
    sim.control.setWritesDisabled(true);
    const err = await failure(INVOKE[name as FunctionName](admin, defaults));
    expectRefusal(err, name, 'writes_disabled');
  });

  it.each(appChanges.map((s) => s.name))('locked: %s on a locked app', async (name) => {
    const app = take();
    sim.control.setLocked(app.id, true);
    const err = await failure(INVOKE[name as FunctionName](admin, { ...defaults, appId: app.id }));
    expectRefusal(err, name, 'locked');
  });

  it.each(appChanges.map((s) => s.name))(
    'in_progress: %s on an app with another kind of run under way',
    async (name) => {
      const app = take();
      // Start a real run of another workflow (simulated time stands still, so it stays under way).
      if (name === 'apps.backup') await admin.apps.restart(app.id, key());
      else await admin.apps.backup(app.id, {}, key());
      const err = await failure(INVOKE[name as FunctionName](admin, { ...defaults, appId: app.id }));
      expectRefusal(err, name, 'in_progress');
    },
  );

  it.each(['apps.maintenance', 'apps.restart', 'apps.update', 'apps.update_modules'] as const)(
    'upgrade_standby: %s on an app whose version upgrade is in standby',
    async (name) => {
      const err = await failure(INVOKE[name](admin, { ...defaults, appId: standbyApp.id }));
      expectRefusal(err, name, 'upgrade_standby');
    },
  );

  it('not_retryable: runs.retry of a run that did not fail', async () => {
    const run = sim.control.addRun({ appId: take().id, state: 'done' });
    expectRefusal(await failure(admin.runs.retry(run.id, { now: true }, key())), 'runs.retry', 'not_retryable');
  });

  it('retry_coming: runs.retry of a run that retries by itself, without now', async () => {
    const run = sim.control.addRun({ appId: take().id, state: 'error', retrying: true });
    expectRefusal(await failure(admin.runs.retry(run.id, {}, key())), 'runs.retry', 'retry_coming');
  });

  it('idempotency_key_reused: the same key with a different body', async () => {
    const app = take();
    await admin.apps.backup(app.id, { format: 'zip' }, { idempotencyKey: 'contract-reused' });
    const err = await failure(admin.apps.backup(app.id, { format: 'dump' }, { idempotencyKey: 'contract-reused' }));
    expectRefusal(err, 'apps.backup', 'idempotency_key_reused');
  });

  it('plan_required: logs.tail of an app whose plan has no log access', async () => {
    expectRefusal(await failure(admin.logs.tail(starterApp.id)), 'logs.tail', 'plan_required');
  });

  it('unavailable: logs.tail of an app whose server is in error', async () => {
    const server = state.servers.get(logsApp.serverId!)!;
    const before = server.state;
    sim.control.checks.servers.setState(server.id, VOCABULARY.server.error);
    try {
      expectRefusal(await failure(admin.logs.tail(logsApp.id)), 'logs.tail', 'unavailable');
    } finally {
      sim.control.checks.servers.setState(server.id, before);
    }
  });

  it('invalid_parameter: logs.tail with a look-back beyond 24h', async () => {
    expectRefusal(await failure(admin.logs.tail(logsApp.id, { since: '48h' })), 'logs.tail', 'invalid_parameter');
  });
});

describe('what the client refuses to send', () => {
  const noKey = {} as ChangeOptions;
  it.each([
    [
      'a change without an idempotency key',
      'apps.restart',
      () => admin.apps.restart(defaults.appId, noKey),
      /idempotency key/,
    ],
    [
      'a change with an empty idempotency key',
      'runs.retry',
      () => admin.runs.retry(defaults.runId, {}, { idempotencyKey: '' }),
      /idempotency key/,
    ],
    [
      'an unknown query parameter',
      'apps.list',
      () => admin.call('apps.list', { query: { colour: 'red' } as never }),
      /unknown query parameter "colour"/,
    ],
    [
      'an unknown body parameter',
      'apps.backup',
      () => admin.call('apps.backup', { id: 1, body: { size: 1 } as never }, key()),
      /unknown body parameter "size"/,
    ],
    [
      'a missing required body parameter',
      'apps.maintenance',
      () => admin.apps.maintenance(defaults.appId, {} as never, key()),
      /"on" is required/,
    ],
    [
      'a value of the wrong type',
      'apps.list',
      () => admin.apps.list({ limit: '5' as never }),
      /"limit" must be an integer/,
    ],
    [
      'a value outside the enum',
      'apps.backup',
      () => admin.apps.backup(defaults.appId, { format: 'tar' as never }, key()),
      /"format" must be one of zip, dump/,
    ],
    ['an id that is not a positive integer', 'apps.get', () => admin.apps.get(0), /id must be a positive integer/],
    [
      'a function that is not in the catalogue',
      'apps.delete',
      () => admin.call('apps.delete' as never),
      /no such function/,
    ],
  ])('%s (%s): ApiUsageError, nothing sent', async (_what, fn, act, message) => {
    sim.control.resetRequests();
    const err = await failure(act());
    expect(err).toBeInstanceOf(ApiUsageError);
    expect(err).toMatchObject({ fn });
    expect((err as Error).message).toMatch(message);
    expect(sim.control.requests()).toEqual([]);
  });

  it('has every function of the catalogue in the invocation table', () => {
    expect(Object.keys(INVOKE).sort()).toEqual(Object.keys(FUNCTIONS).sort());
  });
});
