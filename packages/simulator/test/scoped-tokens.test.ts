import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import type { AppRec } from '../src/sim-state.js';
import { apiGet, apiPost, useSimulator } from '../../../test/helpers/simulator.js';

const clock = new ManualClock('2026-11-24T08:00:00Z');
/** Reads staging and development, changes development only. */
const SCOPED = 'stage-dev-token';
const sim = await useSimulator({
  apps: 80,
  seed: 5,
  clock,
  tokens: [
    {
      token: SCOPED,
      namespaces: '*',
      permissions: '*',
      readEnvironments: ['staging', 'development'],
      changeEnvironments: ['development'],
    },
  ],
});
const state = sim.control.state;
const READABLE = new Set(['staging', 'development']);
const live = (a: AppRec) => a.state !== 'deleted' && a.state !== 'disabled';
const appOf = (env: AppRec['envType'], extra: (a: AppRec) => boolean = () => true) =>
  [...state.apps.values()].find((a) => a.envType === env && a.state === 'running' && !a.upgrade && extra(a))!;
const production = appOf(
  'production',
  (a) => state.runIndex.byApp(a.id).length > 0 && state.backupIndex.byApp(a.id).length > 0,
);
const staging = appOf('staging');
/** A record of a raw answer. */
type Item = Record<string, any>;
/** Every item of a list, page after page. */
const all = async (path: string, token = SCOPED) => {
  const items: Item[] = [];
  for (let offset = 0; ; offset += 1000) {
    const res = await apiGet(sim, `${path}${path.includes('?') ? '&' : '?'}limit=1000&offset=${offset}`, token);
    expect(res.status).toBe(200);
    items.push(...res.body.data.items);
    if (items.length >= res.body.data.total) return { items, total: res.body.data.total as number };
  }
};

describe('reads by id, graded by the environment of the record', () => {
  it.each([
    ['apps.get', () => `/apps/${production.id}`],
    ['runs.get', () => `/runs/${state.runIndex.byApp(production.id)[0]!.id}`],
    ['backups.get', () => `/backups/${state.backupIndex.byApp(production.id)[0]!.id}`],
    ['restore_points.list', () => `/apps/${production.id}/restore-points`],
    ['logs.tail', () => `/apps/${production.id}/logs`],
  ])('refuses %s of a production record with 403 access_denied (the admin token reads it)', async (_fn, path) => {
    const res = await apiGet(sim, path(), SCOPED);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('access_denied');
    expect(res.body.error.message).toContain('production');
    expect((await apiGet(sim, path())).body.error?.code).not.toBe('access_denied');
  });

  it('reads a staging app and its records', async () => {
    expect((await apiGet(sim, `/apps/${staging.id}`, SCOPED)).status).toBe(200);
    const run = state.runIndex.byApp(staging.id)[0]!;
    expect((await apiGet(sim, `/runs/${run.id}`, SCOPED)).status).toBe(200);
  });

  it("refuses a record outside every environment too (a server's run), which the admin token reads", async () => {
    const serverRun = [...state.runs.values()].find((r) => r.appId === null)!;
    const res = await apiGet(sim, `/runs/${serverRun.id}`, SCOPED);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('unassigned');
    expect((await apiGet(sim, `/runs/${serverRun.id}`)).status).toBe(200);
  });
});

describe('lists leave out what the token may not read', () => {
  it.each([
    ['apps.list', '/apps', (item: Item) => item.environment_type],
    ['urls.list', '/urls', (item: Item) => item.environment_type],
    ['backups.list', '/backups', (item: Item) => item.environment_type],
    ['runs.list', '/runs', (item: Item) => item.environment_type],
  ])('%s gives only staging and development records, with a total that counts only them', async (_fn, path, envOf) => {
    const scoped = await all(path);
    const admin = await all(path, sim.adminToken);
    expect(scoped.items.length).toBe(scoped.total);
    expect(new Set(scoped.items.map(envOf))).toEqual(READABLE);
    expect(scoped.total).toBe(admin.items.filter((i) => READABLE.has(envOf(i))).length);
    expect(scoped.total).toBeLessThan(admin.total);
  });

  it('apps.list counts exactly the live apps of the readable environments', async () => {
    const expected = [...state.apps.values()].filter((a) => live(a) && READABLE.has(a.envType ?? '')).length;
    expect((await all('/apps')).total).toBe(expected);
  });

  it('attention.list leaves out production records', async () => {
    const admin = (await apiGet(sim, '/attention')).body.data;
    const scoped = (await apiGet(sim, '/attention', SCOPED)).body.data;
    const envs = (summary: Item) =>
      new Set(summary.sections.flatMap((s: Item) => s.items.map((i: Item) => i.environment_type)));
    expect(envs(admin).has('production')).toBe(true);
    expect(envs(scoped).has('production')).toBe(false);
    expect(scoped.total).toBeLessThan(admin.total);
  });

  it('projects show only the readable environments, each app_count what apps.list gives the token', async () => {
    const apps = (await all('/apps')).items;
    const projects = (await all('/projects')).items;
    expect(projects.length).toBe((await all('/projects', sim.adminToken)).items.length);
    for (const p of projects) {
      for (const env of p.environments) {
        expect(READABLE.has(env.type), `${p.name} ${env.name}`).toBe(true);
        expect(env.app_count, `${p.name} ${env.name}`).toBe(
          apps.filter((a) => a.project === p.name && a.environment === env.name).length,
        );
      }
    }
    const counted = projects.reduce(
      (sum: number, p: Item) => sum + p.environments.reduce((s: number, e: Item) => s + e.app_count, 0),
      0,
    );
    expect(counted).toBe(apps.length);
    const one = projects.find((p: Item) => p.environments.length > 0)!;
    expect((await apiGet(sim, `/projects/${one.id}`, SCOPED)).body.data).toEqual(one);
  });

  it('servers count only the apps on them that apps.list gives the token', async () => {
    const apps = (await all('/apps')).items;
    const servers = (await all('/servers')).items;
    for (const s of servers) expect(s.app_count, s.name).toBe(apps.filter((a) => a.server === s.name).length);
    expect(servers.reduce((sum: number, s: Item) => sum + s.app_count, 0)).toBe(
      apps.filter((a) => a.server !== null).length,
    );
    const server = state.servers.get(production.serverId!)!;
    const scoped = (await apiGet(sim, `/servers/${server.id}`, SCOPED)).body.data;
    expect(scoped).toEqual(servers.find((s) => s.id === server.id));
    expect(scoped.app_count).toBeLessThan((await apiGet(sim, `/servers/${server.id}`)).body.data.app_count);
  });
});

describe('changes, graded by the environment of the app', () => {
  it.each([
    ['production (neither read nor changed)', 'production'],
    ['staging (read, not changed)', 'staging'],
  ] as const)('refuses a change in %s with access_denied', async (_what, env) => {
    const res = await apiPost(sim, `/apps/${appOf(env).id}/restart`, {}, { token: SCOPED });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('access_denied');
  });

  it('changes a development app', async () => {
    const app = appOf('development');
    const res = await apiPost(sim, `/apps/${app.id}/restart`, {}, { token: SCOPED });
    expect(res.status).toBe(200);
    expect(res.body.data.state).toBe('started');
  });
});
