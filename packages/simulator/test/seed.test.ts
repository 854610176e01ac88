import { describe, expect, it } from 'vitest';
import { FUNCTION_LIST, errorsOf } from '../../../src/api/functions.js';
import { attentionSummarySchema } from '../../../src/api/schemas.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { startSimulator } from '../src/index.js';
import { apiGet, useSimulator } from '../../../test/helpers/simulator.js';

const START = '2026-11-01T12:00:00Z';

describe('seed', () => {
  it('gives the same data for the same seed, app count and start time', async () => {
    const [a, b] = await Promise.all([
      startSimulator({ apps: 40, seed: 5, clock: new ManualClock(START) }),
      startSimulator({ apps: 40, seed: 5, clock: new ManualClock(START) }),
    ]);
    try {
      for (const path of [
        '/apps?limit=1000&include_deleted=true',
        '/runs?limit=1000',
        '/backups?limit=1000',
        '/urls?limit=1000',
        '/attention',
        `/runs/${a.control.state.runIndex.all[5]!.id}`,
      ]) {
        expect((await apiGet(a, path)).text).toBe((await apiGet(b, path)).text);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('gives other data for another seed', async () => {
    const [a, b] = await Promise.all([
      startSimulator({ apps: 40, seed: 5, clock: new ManualClock(START) }),
      startSimulator({ apps: 40, seed: 6, clock: new ManualClock(START) }),
    ]);
    try {
      expect((await apiGet(a, '/apps?limit=1000')).text).not.toBe((await apiGet(b, '/apps?limit=1000')).text);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it.each([1, 2, 9, 250])('seeds %i apps with namespaces, projects, servers and URLs', async (apps) => {
    const sim = await startSimulator({ apps, clock: new ManualClock(START) });
    try {
      const stats = sim.control.stats();
      expect(stats.apps).toBe(apps);
      expect(stats.namespaces).toBe(Math.min(8, Math.max(2, Math.round(apps / 250))));
      expect(stats.urls).toBeGreaterThanOrEqual(apps);
      expect(stats.servers).toBeGreaterThanOrEqual(2);
      expect((await apiGet(sim, '/apps?limit=1000&include_deleted=true')).body.data.total).toBe(apps);
    } finally {
      await sim.close();
    }
  });

  it('has a sprinkle of problems for the attention summary', async () => {
    const sim = await startSimulator({ apps: 200, clock: new ManualClock(START) });
    try {
      const kinds = new Set(sim.control.problems().map((p) => p.kind));
      for (const kind of [
        'failed_run',
        'certificate_expiring',
        'certificate_expired',
        'public_check_failed',
        'backup_stale',
        'backup_unverified',
        'offsite_failed',
        'maintenance',
      ]) {
        expect([...kinds]).toContain(kind);
      }
      const servers = (await apiGet(sim, '/servers?state=error')).body.data;
      expect(servers.total).toBeGreaterThanOrEqual(1);
    } finally {
      await sim.close();
    }
  });

  it('seeds and serves 10,000 apps', async () => {
    const sim = await startSimulator({ apps: 10_000, clock: new ManualClock(START) });
    try {
      const stats = sim.control.stats();
      expect(stats).toMatchObject({ apps: 10_000, namespaces: 8 });
      expect(stats.runs).toBeGreaterThan(150_000);
      expect(stats.backups).toBeGreaterThan(250_000);
      const page = (await apiGet(sim, '/backups?limit=1000&offset=200000')).body.data;
      expect(page.items).toHaveLength(1000);
      expect(page.total).toBe(stats.backups);
      expect((await apiGet(sim, '/runs?limit=1000&namespace=acme')).body.data.items).toHaveLength(1000);
      expect(attentionSummarySchema.safeParse((await apiGet(sim, '/attention')).body.data).success).toBe(true);
    } finally {
      await sim.close();
    }
  });
});

describe('openapi.json', async () => {
  const sim = await useSimulator({ apps: 2 });

  it('is served without a token and lists every catalogue function', async () => {
    const res = await fetch(`${sim.baseUrl}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, any>> };
    expect(doc.openapi).toMatch(/^3\./);
    for (const spec of FUNCTION_LIST) {
      const op = doc.paths[`/api/v1${spec.path}`]?.[spec.method.toLowerCase()];
      expect(op, spec.name).toBeDefined();
      expect(op['x-function']).toBe(spec.name);
      expect(op.operationId).toBe(spec.tool);
      expect(op['x-error-codes']).toEqual(errorsOf(spec));
      expect(op.responses['200'].content['application/json'].schema.properties.data).toBeTypeOf('object');
      const names = op.parameters.map((p: { name: string }) => p.name);
      for (const q of Object.keys(spec.query)) expect(names).toContain(q);
      if (spec.kind === 'change') {
        expect(names).toContain('Idempotency-Key');
        expect(Object.keys(op.requestBody.content['application/json'].schema.properties)).toEqual(
          Object.keys(spec.body),
        );
      }
    }
  });
});
