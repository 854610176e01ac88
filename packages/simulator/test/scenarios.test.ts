import { describe, expect, it } from 'vitest';
import { attentionSummarySchema, logTailSchema } from '../../../src/api/schemas.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { startSimulator } from '../src/index.js';
import { apiGet, useSimulator } from '../../../test/helpers/simulator.js';

const HOUR = 3_600_000;
const clock = new ManualClock('2026-11-01T12:00:00Z');
const sim = await useSimulator({
  apps: 60,
  seed: 9,
  clock,
  tokens: [{ token: 'acme-all', namespaces: ['acme'], permissions: '*' }],
});
const state = sim.control.state;
const pool = [...state.apps.values()].filter((a) => a.state === 'running' && !a.maintenance);
const take = (envType: string) =>
  pool.splice(
    pool.findIndex((a) => a.envType === envType),
    1,
  )[0]!;
const problemsOf = (kind: string) => sim.control.problems().filter((p) => p.kind === kind);

describe('certificates and outside checks', () => {
  it.each([
    [5, 'expiring_soon', 'certificate_expiring'],
    [-1, 'expired', 'certificate_expired'],
  ])('a certificate ending in %i days is %s and a problem', async (inDays, status, kind) => {
    const url = state.urls.get(take('production').urlIds[0]!)!;
    expect(sim.control.checks.certificates.expire(url.id, { inDays })).toMatchObject({ ssl_status: status });
    const listed = (await apiGet(sim, `/urls?app_id=${url.appId}`)).body.data.items.find(
      (u: { id: number }) => u.id === url.id,
    );
    expect(listed.ssl_status).toBe(status);
    expect(problemsOf(kind).map((p) => p.id)).toContain(url.id);
    sim.control.checks.certificates.renew(url.id);
    expect(problemsOf(kind).map((p) => p.id)).not.toContain(url.id);
  });

  it('turns a certificate expiring_soon as simulated time passes', async () => {
    const url = state.urls.get(take('staging').urlIds[0]!)!;
    sim.control.checks.certificates.expire(url.id, { inDays: 16 });
    expect((await apiGet(sim, `/apps/${url.appId}`)).body.data.urls[0].ssl_status).toBe('valid');
    sim.control.advance(3 * 24 * HOUR);
    expect((await apiGet(sim, `/apps/${url.appId}`)).body.data.urls[0].ssl_status).toBe('expiring_soon');
    sim.control.checks.certificates.renew(url.id);
  });

  it('fails and passes an outside check', () => {
    const url = state.urls.get(take('production').urlIds[0]!)!;
    expect(sim.control.checks.url_checks.fail(url.id, 'wrong_app')).toMatchObject({
      public_check: 'failed',
      public_check_code: 'wrong_app',
    });
    expect(problemsOf('public_check_failed').map((p) => p.id)).toContain(url.id);
    expect(sim.control.checks.url_checks.pass(url.id)).toMatchObject({ public_check: 'passed' });
    expect(problemsOf('public_check_failed').map((p) => p.id)).not.toContain(url.id);
  });
});

describe('backups', () => {
  it.each([
    [30, 'warning', 'backup_stale'],
    [80, 'critical', 'backup_critical'],
  ])('ageing a production app backups to %i h makes it %s', async (hours, health, kind) => {
    const app = take('production');
    const answer = sim.control.checks.backups.age(app.id, { hours });
    expect(answer.backup_health).toBe(health);
    expect(Date.parse(answer.last_backup_at!)).toBe(sim.control.now() - hours * HOUR);
    const newest = (await apiGet(sim, `/backups?app_id=${app.id}&limit=1`)).body.data.items[0];
    expect(newest.taken_at).toBe(answer.last_backup_at);
    expect(problemsOf(kind).map((p) => p.appId)).toContain(app.id);
    sim.control.checks.backups.add(app.id);
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.backup_health).toBe('healthy');
    expect(problemsOf(kind).map((p) => p.appId)).not.toContain(app.id);
  });

  it('reports an unverified newest backup and a failed off-site copy', () => {
    const app = take('production');
    const backup = sim.control.checks.backups.add(app.id, { hoursAgo: 1 });
    sim.control.checks.backups.setVerified(backup.id, false);
    const failed = sim.control.checks.backups.failOffsite(backup.id, 'upload failed: 403 AccessDenied');
    expect(failed.offsite[0]).toMatchObject({
      state: 'failed',
      on_storage: false,
      error: 'upload failed: 403 AccessDenied',
    });
    expect(problemsOf('backup_unverified').map((p) => p.id)).toContain(backup.id);
    expect(problemsOf('offsite_failed').map((p) => p.id)).toContain(backup.id);
  });
});

describe('runs, apps and servers', () => {
  it('a failed run is a problem until a newer run of the same action succeeds', () => {
    const app = take('development');
    const failed = sim.control.addRun({
      appId: app.id,
      action: 'update',
      state: 'error',
      failedStep: 'build_image',
      reason: 'disk full',
    });
    expect(failed.steps.find((s) => s.state === 'error')).toMatchObject({ name: 'build_image', reason: 'disk full' });
    expect(problemsOf('failed_run').map((p) => p.id)).toContain(failed.id);
    sim.control.advance(1000);
    sim.control.addRun({ appId: app.id, action: 'update', state: 'done', startedAgoMs: 0 });
    expect(problemsOf('failed_run').map((p) => p.id)).not.toContain(failed.id);
  });

  it('a waiting watcher keeps a run running until setRunState makes it report', () => {
    const app = take('development');
    const run = sim.control.addRun({
      appId: app.id,
      action: 'backup',
      state: 'running',
      watcher: { state: 'waiting', progress: 'dumping database' },
    });
    expect(run).toMatchObject({ state: 'running', watcher: { state: 'waiting', progress: 'dumping database' } });
    sim.control.advance(6 * HOUR);
    expect(sim.control.setRunState(run.id, {}).state).toBe('running');
    const failed = sim.control.setRunState(run.id, {
      watcher: { state: 'timeout', reason: 'no answer from the server for 6 h' },
    });
    expect(failed).toMatchObject({
      state: 'error',
      watcher: { state: 'timeout', reason: 'no answer from the server for 6 h' },
    });
  });

  it('maintenance shows in problems and attention', async () => {
    const app = take('staging');
    sim.control.checks.maintenance.set(app.id, true);
    expect(problemsOf('maintenance').map((p) => p.appId)).toContain(app.id);
    const attention = attentionSummarySchema.parse((await apiGet(sim, '/attention')).body.data);
    const section = attention.sections.find((s) => s.rule === 'maintenance')!;
    expect(section).toMatchObject({ severity: 'info', kind: 'app' });
    expect(section.items.map((i) => i.id)).toContain(app.id);
    sim.control.checks.maintenance.set(app.id, false);
  });

  it('a server in error makes its apps logs unavailable', async () => {
    const app = [...state.apps.values()].find(
      (a) =>
        a.state === 'running' &&
        state.projects.get(a.projectId)!.plan !== 'starter' &&
        state.servers.get(a.serverId!)!.state === 'running',
    )!;
    expect((await apiGet(sim, `/apps/${app.id}/logs`)).status).toBe(200);
    expect(sim.control.checks.servers.setState(app.serverId!, 'error').state).toBe('error');
    const res = await apiGet(sim, `/apps/${app.id}/logs`);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('unavailable');
    sim.control.checks.servers.setState(app.serverId!, 'running');
  });
});

describe('attention summary', () => {
  it('has non-empty sections, most severe first, at most 20 items each with an id, counts summing to total', async () => {
    const attention = attentionSummarySchema.parse((await apiGet(sim, '/attention')).body.data);
    expect(attention.sections.length).toBeGreaterThan(0);
    const order = { danger: 0, warning: 1, info: 2 };
    const ranks = attention.sections.map((s) => order[s.severity]);
    expect([...ranks].sort()).toEqual(ranks);
    for (const s of attention.sections) {
      expect(s.count).toBeGreaterThan(0);
      expect(s.items.length).toBe(Math.min(20, s.count));
      for (const item of s.items) expect(item.id).toEqual(expect.any(Number));
    }
    expect(attention.total).toBe(attention.sections.reduce((n, s) => n + s.count, 0));
  });

  it('covers only the token namespaces', async () => {
    const attention = (await apiGet(sim, '/attention', 'acme-all')).body.data;
    for (const s of attention.sections) for (const item of s.items) expect(item.namespace).toBe('acme');
  });
});

describe('logs.tail', () => {
  const app = [...state.apps.values()].find(
    (a) =>
      a.state === 'running' &&
      state.projects.get(a.projectId)!.plan !== 'starter' &&
      state.servers.get(a.serverId!)!.state === 'running',
  )!;

  it('gives the last hour of the main log, newest last, and only newer lines after a cursor', async () => {
    const first = logTailSchema.parse((await apiGet(sim, `/apps/${app.id}/logs`)).body.data);
    expect(first.items.length).toBeGreaterThan(100);
    expect(first.truncated).toBe(false);
    expect(first.items.every((l) => l.source === 'main')).toBe(true);
    const times = first.items.map((l) => Date.parse(l.time!));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect((await apiGet(sim, `/apps/${app.id}/logs?after=${first.cursor}`)).body.data.items).toEqual([]);
    sim.control.advance(60_000);
    const next = logTailSchema.parse((await apiGet(sim, `/apps/${app.id}/logs?after=${first.cursor}`)).body.data);
    expect(next.items.length).toBe(3);
    expect(Date.parse(next.items[0]!.time!)).toBeGreaterThan(times[times.length - 1]!);
  });

  it('filters with grep, sources and limit', async () => {
    const grep = logTailSchema.parse(
      (await apiGet(sim, `/apps/${app.id}/logs?since=24h&grep=ERROR&limit=1000`)).body.data,
    );
    expect(grep.items.length).toBeGreaterThan(0);
    expect(grep.items.every((l) => l.line.includes('ERROR'))).toBe(true);
    const limited = logTailSchema.parse((await apiGet(sim, `/apps/${app.id}/logs?limit=5`)).body.data);
    expect(limited.items).toHaveLength(5);
    expect(limited.truncated).toBe(true);
    const all = logTailSchema.parse(
      (await apiGet(sim, `/apps/${app.id}/logs?source=all&since=24h&limit=1000`)).body.data,
    );
    expect(new Set(all.items.map((l) => l.source)).size).toBeGreaterThan(3);
  });

  it.each([
    ['since=2d', 'invalid_parameter'],
    ['source=kernel', 'invalid_parameter'],
    ['after=garbage', 'invalid_parameter'],
    ['limit=0', 'invalid_parameter'],
  ])('refuses %s', async (query, code) => {
    expect((await apiGet(sim, `/apps/${app.id}/logs?${query}`)).body.error.code).toBe(code);
  });

  it('answers plan_required for a project on the starter plan', async () => {
    const starter = [...state.apps.values()].find((a) => state.projects.get(a.projectId)!.plan === 'starter')!;
    const res = await apiGet(sim, `/apps/${starter.id}/logs`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('plan_required');
  });
});

describe('churn', () => {
  it('changes a share of the apps, the same way for the same seed', async () => {
    const a = await startSimulator({ apps: 100, seed: 4, clock });
    const b = await startSimulator({ apps: 100, seed: 4, clock });
    try {
      const ca = a.control.churn(0.2);
      expect(ca.apps).toBeGreaterThan(10);
      expect(ca.apps).toBeLessThanOrEqual(20);
      expect(ca.runs + ca.backups + ca.urls).toBeGreaterThan(0);
      expect(b.control.churn(0.2)).toEqual(ca);
      expect((await apiGet(a, '/runs?limit=50')).text).toBe((await apiGet(b, '/runs?limit=50')).text);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
