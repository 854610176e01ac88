/**
 * Views (`CallOptions.view`): a reader that needs a few fields of many records asks for a `pick`
 * of the answer's schema, and the client checks and keeps only those fields. Against the
 * simulator over loopback; a field is mistyped by editing the simulator's state.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ApiResponseError } from '../../src/api/errors.js';
import { Secret } from '../../src/lib/secret.js';
import { appLabelsView, maintenanceAppView } from '../../src/collectors/views.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';

const clock = new JumpingClock();
const sim = await useSimulator({ apps: 12, seed: 9, clock });
const c = createApiClient({
  baseUrl: sim.baseUrl,
  token: new Secret(sim.adminToken),
  clock,
  requestsPerSecond: Infinity,
  maxRetries: 0,
  pageSize: 5,
});
afterAll(() => c.close());

const anApp = () => [...sim.control.state.apps.values()][0]!;

describe('views', () => {
  it('get keeps exactly the fields of the view, with the values as answered', async () => {
    const app = anApp();
    const full = await c.apps.get(app.id);
    const seen = await c.apps.get(app.id, { view: maintenanceAppView });
    expect(Object.keys(seen).sort()).toEqual(Object.keys(maintenanceAppView.shape).sort());
    const { repositories, ...rest } = seen;
    for (const key of Object.keys(rest) as (keyof typeof rest)[]) expect(rest[key]).toEqual(full[key]);
    // A nested view keeps its own fields of each element, as answered.
    expect(repositories).toHaveLength(full.repositories.length);
    repositories.forEach((repo, i) => {
      for (const [key, value] of Object.entries(repo))
        expect(value).toEqual(full.repositories[i]![key as keyof typeof repo]);
      expect(Object.keys(repo).length).toBeLessThan(Object.keys(full.repositories[i]!).length);
    });
  });

  it('listAll keeps the view of every item of every page, and still checks the walk (total, ids)', async () => {
    const full = await c.apps.listAll();
    const seen = await c.apps.listAll(undefined, { view: appLabelsView });
    expect(seen.map((a) => a.id)).toEqual(full.map((a) => a.id));
    expect(full.length).toBeGreaterThan(5); // several pages of 5
    for (const app of seen) expect(Object.keys(app).sort()).toEqual(Object.keys(appLabelsView.shape).sort());
  });

  it('a mistyped field outside the view is not checked; the full read still refuses it', async () => {
    const app = anApp() as unknown as Record<string, unknown>;
    const saved = app.version;
    app.version = 42;
    try {
      const err = await c.apps.get(app.id as number).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiResponseError);
      expect((err as ApiResponseError).detail).toContain('version');
      await expect(c.apps.get(app.id as number, { view: maintenanceAppView })).resolves.toMatchObject({ id: app.id });
      await expect(c.apps.listAll(undefined, { view: appLabelsView })).resolves.toHaveLength(
        sim.control.state.apps.size,
      );
    } finally {
      app.version = saved;
    }
  });

  it('a mistyped field inside the view fails the read, naming the item and the field', async () => {
    const app = anApp() as unknown as Record<string, unknown>;
    const saved = app.name;
    app.name = 7;
    try {
      const err = await c.apps.listAll(undefined, { view: appLabelsView }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiResponseError);
      expect(err).toMatchObject({ problem: 'schema' });
      expect((err as ApiResponseError).detail).toMatch(new RegExp(`items\\[\\d+\\]\\(id ${String(app.id)}\\)\\.name`));
    } finally {
      app.name = saved;
    }
  });
});
