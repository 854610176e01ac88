/**
 * The shared apps.list as it is kept between cycles (`SharedApps`), against the simulator: every
 * app the list gives, field for field, in the list's order, across namespaces, whatever the kept
 * copy shares among apps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { CYCLE_WINDOW_MS, SharedApps } from '../../src/collectors/shared-apps.js';
import { appBackupStateView } from '../../src/collectors/views.js';
import { Secret } from '../../src/lib/secret.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';

let sim: RunningSimulator;
let client: ApiClient;

beforeAll(async () => {
  sim = await startSimulator({ apps: 120, seed: 5, clock: new ManualClock() });
  client = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(sim.adminToken),
    requestsPerSecond: 1000,
    maxRetries: 0,
    pageSize: 25,
  });
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

describe('SharedApps', () => {
  it.each([
    ['every namespace the token reaches', null],
    ['the namespaces configured', 'each'],
  ] as const)('keeps each app of the list as the view reads it, in order (%s)', async (_what, scope) => {
    const all = await client.apps.listAll({}, { view: appBackupStateView });
    const namespaces = scope === null ? null : [...new Set(all.map((a) => a.namespace))].sort();
    const read = await new SharedApps().read({ client, namespaces, now: sim.control.now() }, CYCLE_WINDOW_MS);
    const expected =
      namespaces === null
        ? [{ namespace: undefined, apps: all }]
        : namespaces.map((namespace) => ({ namespace, apps: all.filter((a) => a.namespace === namespace) }));
    expect(all.length).toBeGreaterThan(100);
    expect(read.parts).toEqual(expected);
    expect(read.byId.size).toBe(all.length);
    for (const app of all) expect(read.byId.get(app.id)).toEqual(app);
    // Field for field, with no field added or left out (toEqual would pass an undefined one).
    for (const app of all) expect(Object.keys(read.byId.get(app.id)!).sort()).toEqual(Object.keys(app).sort());
  });
});
