import { describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName } from '../../../src/api/functions.js';
import { errorEnvelopeSchema } from '../../../src/api/schemas.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { apiGet, useSimulator } from '../../../test/helpers/simulator.js';

const clock = new ManualClock('2026-11-01T12:00:00Z');
const sim = await useSimulator({
  apps: 60,
  seed: 7,
  clock,
  tokens: [
    {
      token: 'acme-reader',
      login: 'reader',
      namespaces: ['acme'],
      permissions: ['deployment_app: read', 'deployment_workflow: read', 'workspace: read'],
    },
    { token: 'no-perms', namespaces: '*', permissions: [] },
  ],
});
const state = sim.control.state;
const other = [...state.namespaces.values()].find((n) => n.code !== 'acme')!;
const appOutsideAcme = [...state.apps.values()].find((a) => a.nsId === other.id)!;

describe('authentication and permissions', () => {
  it.each([
    ['no Authorization header', null, 401, 'invalid_token'],
    ['an unknown token', 'nope', 401, 'invalid_token'],
    ['a token without the permission', 'no-perms', 403, 'function_not_allowed'],
  ])('answers %s with %s %s', async (_what, token, status, code) => {
    const res = await apiGet(sim, '/apps', token);
    expect(res.status).toBe(status);
    expect(errorEnvelopeSchema.parse(res.body).error.code).toBe(code);
  });

  it('refuses a function outside the token permissions while allowing others', async () => {
    expect((await apiGet(sim, '/backups', 'acme-reader')).body.error.code).toBe('function_not_allowed');
    expect((await apiGet(sim, '/apps', 'acme-reader')).status).toBe(200);
  });
});

describe('namespaces', () => {
  it('lists only the token namespaces', async () => {
    const res = await apiGet(sim, '/apps?limit=1000', 'acme-reader');
    expect(res.body.data.items.length).toBeGreaterThan(0);
    expect(new Set(res.body.data.items.map((a: { namespace: string }) => a.namespace))).toEqual(new Set(['acme']));
    const whoami = await apiGet(sim, '/whoami', 'acme-reader');
    expect(whoami.body.data.namespaces.map((n: { code: string }) => n.code)).toEqual(['acme']);
  });

  it.each([
    ['by code', () => other.code],
    ['by id', () => String(other.id)],
  ])('narrows with namespace %s', async (_how, value) => {
    const res = await apiGet(sim, `/apps?limit=1000&namespace=${value()}`);
    const expected = [...state.apps.values()].filter(
      (a) => a.nsId === other.id && a.state !== 'deleted' && a.state !== 'disabled',
    ).length;
    expect(res.body.data.total).toBe(expected);
    expect(res.body.data.items.every((a: { namespace: string }) => a.namespace === other.code)).toBe(true);
  });

  it.each([
    ['unknown', 'no-such-namespace', sim.adminToken],
    ['not reached by the token', other.code, 'acme-reader'],
  ])('answers namespace_not_found for a namespace %s', async (_what, ns, token) => {
    const res = await apiGet(sim, `/runs?namespace=${ns}`, token);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('namespace_not_found');
  });

  it('answers not_found for a record outside the token namespaces', async () => {
    const res = await apiGet(sim, `/apps/${appOutsideAcme.id}`, 'acme-reader');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect((await apiGet(sim, `/apps/${appOutsideAcme.id}`)).status).toBe(200);
  });
});

describe('pagination', () => {
  it('pages runs newest first with a stable total', async () => {
    const first = await apiGet(sim, '/runs?limit=30');
    const second = await apiGet(sim, '/runs?limit=30&offset=30');
    expect(first.body.data.total).toBe(state.runs.size);
    expect(second.body.data.total).toBe(state.runs.size);
    const all = [...first.body.data.items, ...second.body.data.items];
    expect(new Set(all.map((r: { id: number }) => r.id)).size).toBe(60);
    const times = all.map((r: { created_at: string }) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('defaults to 50 items', async () => {
    expect((await apiGet(sim, '/backups')).body.data.items).toHaveLength(50);
  });

  it('lists apps by id', async () => {
    const ids = (await apiGet(sim, '/apps?limit=20')).body.data.items.map((a: { id: number }) => a.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });

  it.each([
    ['limit=abc', 'invalid_parameter'],
    ['limit=-1', 'invalid_parameter'],
    ['limit=1.5', 'invalid_parameter'],
    ['limit=1001', 'invalid_parameter'],
    ['offset=-3', 'invalid_parameter'],
    ['limit=1&limit=2', 'invalid_parameter'],
    ['include_deleted=yes', 'invalid_parameter'],
    ['environment_type=prod', 'invalid_parameter'],
    ['colour=blue', 'unknown_parameter'],
  ])('refuses %s with %s', async (query, code) => {
    const res = await apiGet(sim, `/apps?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toMatch(/"(limit|offset|include_deleted|environment_type|colour)"/);
  });

  it('refuses a non-integer id in the path', async () => {
    const res = await apiGet(sim, '/apps/abc');
    expect(res.body.error.code).toBe('invalid_parameter');
  });

  it('answers not_found in the envelope for an unknown path', async () => {
    const res = await apiGet(sim, '/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('filters', () => {
  const apps = [...state.apps.values()];
  const live = apps.filter((a) => a.state !== 'deleted' && a.state !== 'disabled');
  const someApp = live[3]!;
  it.each([
    ['environment_type=production', live.filter((a) => a.envType === 'production').length],
    ['edition=enterprise', live.filter((a) => a.edition === 'enterprise').length],
    [`server_id=${someApp.serverId}`, live.filter((a) => a.serverId === someApp.serverId).length],
    [`version=${someApp.version}`, live.filter((a) => a.version === someApp.version).length],
    [`search=${someApp.name.toUpperCase()}`, live.filter((a) => a.name.includes(someApp.name)).length],
    ['include_deleted=true', apps.length],
    ['state=running', live.filter((a) => a.state === 'running').length],
  ])('apps.list %s', async (query, expected) => {
    const res = await apiGet(sim, `/apps?limit=1000&${query}`);
    expect(res.body.data.total).toBe(expected);
    expect(res.body.data.items).toHaveLength(expected);
  });

  it('filters runs and backups by app, newest first', async () => {
    const runs = await apiGet(sim, `/runs?app_id=${someApp.id}&limit=1000`);
    expect(runs.body.data.items.every((r: { app_id: number }) => r.app_id === someApp.id)).toBe(true);
    expect(runs.body.data.total).toBe(state.runIndex.byApp(someApp.id).length);
    const backups = await apiGet(sim, `/backups?app_id=${someApp.id}&limit=5`);
    expect(backups.body.data.items.every((b: { app_id: number }) => b.app_id === someApp.id)).toBe(true);
    const taken = backups.body.data.items.map((b: { taken_at: string }) => b.taken_at);
    expect([...taken].sort().reverse()).toEqual(taken);
  });

  it('leaves deleted projects out unless include_deleted', async () => {
    const all = (await apiGet(sim, '/projects?limit=1000&include_deleted=true')).body.data.total;
    expect(all).toBe(state.projects.size);
    expect((await apiGet(sim, '/projects?limit=1000')).body.data.total).toBe(all - 1);
  });

  it('filters URLs by certificate status', async () => {
    const res = await apiGet(sim, '/urls?ssl_status=valid&limit=1000');
    expect(res.body.data.total).toBeGreaterThan(0);
    expect(res.body.data.items.every((u: { ssl_status: string }) => u.ssl_status === 'valid')).toBe(true);
  });
});

describe('every read answers what its zod schema says', () => {
  const app = [...state.apps.values()].find(
    (a) =>
      a.state === 'running' &&
      state.projects.get(a.projectId)!.plan !== 'starter' &&
      state.servers.get(a.serverId!)!.state === 'running',
  )!;
  const run = state.runIndex.all[0]!;
  const reads: [FunctionName, string][] = [
    ['apps.get', `/apps/${app.id}`],
    ['apps.list', '/apps?limit=1000&include_deleted=true'],
    ['attention.list', '/attention'],
    ['backups.get', `/backups/${state.backupIndex.all[0]!.id}`],
    ['backups.list', '/backups?limit=1000'],
    ['installers.get', `/installers/${[...state.installers.keys()][0]}`],
    ['installers.list', '/installers?include_deleted=true'],
    ['logs.tail', `/apps/${app.id}/logs?source=all&since=24h&limit=1000`],
    ['projects.get', `/projects/${app.projectId}`],
    ['projects.list', '/projects?limit=1000'],
    ['restore_points.list', `/apps/${app.id}/restore-points`],
    ['runs.get', `/runs/${run.id}`],
    ['runs.list', '/runs?limit=1000'],
    ['servers.get', `/servers/${app.serverId}`],
    ['servers.list', '/servers?include_deleted=true'],
    ['urls.list', '/urls?limit=1000'],
    ['whoami', '/whoami'],
  ];

  it('covers every read function of the catalogue', () => {
    const readNames = Object.values(FUNCTIONS)
      .filter((f) => f.kind === 'read')
      .map((f) => f.name)
      .sort();
    expect(reads.map(([name]) => name).sort()).toEqual(readNames);
  });

  it.each(reads)('%s', async (name, path) => {
    const res = await apiGet(sim, path);
    expect(res.status).toBe(200);
    const parsed = FUNCTIONS[name].answer.safeParse(res.body.data);
    expect(parsed.success ? 'ok' : JSON.stringify(parsed.error.issues.slice(0, 3))).toBe('ok');
  });

  it('every seeded run validates as runs.get', async () => {
    for (const r of state.runIndex.all.slice(0, 300)) {
      const res = await apiGet(sim, `/runs/${r.id}`);
      expect(FUNCTIONS['runs.get'].answer.safeParse(res.body.data).success).toBe(true);
    }
  });
});
