/**
 * The simulator's modes for one odd record: reads by id graded by environment while lists are not
 * (`listGrading: 'none'`), one record's timestamp written unparseably, one field of one record set
 * to any value. Over HTTP, as the daemon meets them; the CLI flags at the end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { parseTime } from '../../../src/lib/parse-time.js';
import { UNREADABLE_TIME } from '../src/fault-rewrites.js';
import { runCli } from '../../../test/helpers/cli-harness.js';
import { apiGet, useSimulator } from '../../../test/helpers/simulator.js';

const STAGING_ONLY = 'staging-only-token';
const sim = await useSimulator({
  apps: 40,
  seed: 3,
  clock: new ManualClock('2026-11-24T08:00:00Z'),
  tokens: [{ token: STAGING_ONLY, namespaces: '*', permissions: '*', readEnvironments: ['staging'] }],
});
afterEach(async () => {
  sim.control.clearFaults();
  sim.control.setListGrading('environment');
});

type Item = Record<string, any>;
const data = async (path: string, token?: string) => {
  const res = await apiGet(sim, path, token);
  expect(res.status, path).toBe(200);
  return (res.body as { data: any }).data;
};

describe('list grading', () => {
  it.each([
    ['apps', 'environment_type'],
    ['runs', 'environment_type'],
    ['urls', 'environment_type'],
    ['backups', 'environment_type'],
  ])('%s: environment (default) lists only what reads by id give; none lists production too', async (list, field) => {
    const graded = (await data(`/${list}?limit=1000`, STAGING_ONLY)).items as Item[];
    expect(graded.length).toBeGreaterThan(0);
    expect(graded.every((r) => r[field] === 'staging')).toBe(true);
    sim.control.setListGrading('none');
    const open = (await data(`/${list}?limit=1000`, STAGING_ONLY)).items as Item[];
    expect(open.some((r) => r[field] === 'production')).toBe(true);
    expect(open.length).toBe((await data(`/${list}?limit=1000`)).items.length);
  });

  it('none: a production run the list names is refused by runs.get (access_denied); a staging one is read', async () => {
    sim.control.setListGrading('none');
    const runs = (await data('/runs?limit=1000', STAGING_ONLY)).items as Item[];
    const prod = runs.find((r) => r.environment_type === 'production')!;
    const stage = runs.find((r) => r.environment_type === 'staging')!;
    const refused = await apiGet(sim, `/runs/${prod.id}`, STAGING_ONLY);
    expect(refused.status).toBe(403);
    expect((refused.body as { error: { code: string } }).error.code).toBe('access_denied');
    expect((await data(`/runs/${stage.id}`, STAGING_ONLY)).id).toBe(stage.id);
  });

  it('is switched over the control interface, and refuses another word', async () => {
    const set = await fetch(`${sim.baseUrl}/_sim/setListGrading`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(['none']),
    });
    expect(set.status).toBe(200);
    const runs = (await data('/runs?limit=1000', STAGING_ONLY)).items as Item[];
    expect(runs.some((r) => r.environment_type === 'production')).toBe(true);
    expect(() => sim.control.setListGrading('sometimes' as never)).toThrow(
      /listGrading must be one of environment, none/,
    );
  });
});

describe('one odd record', () => {
  it('unreadableTime: the record with the id gets a time no reader parses; the others stay as they were', async () => {
    const before = (await data('/runs?limit=5')).items as Item[];
    const target = before[2]!;
    sim.control.setFault('runs.list', { unreadableTime: { id: target.id } });
    const after = (await data('/runs?limit=5')).items as Item[];
    const field = Object.keys(target).find((k) => k.endsWith('_at') && typeof target[k] === 'string')!;
    expect(after[2]![field]).toBe(UNREADABLE_TIME);
    expect(() => parseTime(UNREADABLE_TIME)).not.toThrow();
    expect(parseTime(UNREADABLE_TIME)).toBeNull();
    expect(after.filter((_, i) => i !== 2)).toEqual(before.filter((_, i) => i !== 2));
  });

  it('unreadableTime on a read by id, a named field', async () => {
    const app = [...sim.control.state.apps.values()][0]!;
    sim.control.setFault('apps.get', { unreadableTime: { field: 'updated_at' } });
    expect((await data(`/apps/${app.id}`)).updated_at).toBe(UNREADABLE_TIME);
  });

  it('recordField: one field of one record, nested paths too', async () => {
    const urls = (await data('/urls?limit=4')).items as Item[];
    sim.control.setFault('urls.list', { recordField: { id: urls[1]!.id, field: 'ssl_status', value: 'revoked' } });
    const odd = (await data('/urls?limit=4')).items as Item[];
    expect(odd.map((u) => u.ssl_status)).toEqual(urls.map((u, i) => (i === 1 ? 'revoked' : u.ssl_status)));
    const app = [...sim.control.state.apps.values()].find((a) => a.urlIds.length > 0)!;
    sim.control.setFault('apps.get', { recordField: { field: 'urls.0.ssl_status', value: 'revoked' } });
    expect((await data(`/apps/${app.id}`)).urls[0].ssl_status).toBe('revoked');
  });

  it('recordField built large by the simulator: a text repeated, an object widened', async () => {
    const app = [...sim.control.state.apps.values()][0]!;
    sim.control.setFault('apps.get', { recordField: { field: 'name', value: 'ab', repeat: 1_000_000 } });
    expect((await data(`/apps/${app.id}`)).name).toHaveLength(2_000_000);
    sim.control.setFault('apps.get', { recordField: { field: 'extra', value: { id: 1 }, fields: 3 } });
    expect((await data(`/apps/${app.id}`)).extra).toEqual({ id: 1, f0: 'v0', f1: 'v1', f2: 'v2' });
  });
});

describe('the flags', () => {
  it('--list-grading none, --fault FN=unreadableTime:ID and FN=oddValue:FIELD=VALUE@ID serve as they say', async () => {
    const stop = new AbortController();
    let out = '';
    const exit = runCli(
      [
        'simulator',
        '--port',
        '0',
        '--apps',
        '8',
        '--token',
        'cli-test-token',
        '--scoped-token',
        'stage-reader:read=staging',
        '--list-grading',
        'none',
        '--fault',
        'runs.list=unreadableTime:first',
        '--fault',
        'urls.list=oddValue:ssl_status=revoked',
        '--fault',
        'apps.list=oddValue:version=19@999999',
      ],
      { signal: stop.signal, onOutput: (s) => (out = s) },
    );
    while (!out.includes('token:')) await new Promise((r) => setTimeout(r, 5));
    const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    const get = async (path: string, token = 'cli-test-token') =>
      (
        (await (await fetch(`${baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          data: any;
        }
      ).data;
    expect(out).toContain('list grading: none');
    expect(out).toContain('fault on urls.list: {"recordField":{"field":"ssl_status","value":"revoked"}}');
    expect(out).toContain('fault on apps.list: {"recordField":{"field":"version","value":19,"id":999999}}');
    expect((await get('/urls')).items[0].ssl_status).toBe('revoked');
    expect(Object.values((await get('/runs')).items[0] as Item)).toContain(UNREADABLE_TIME);
    const apps = (await get('/apps', 'stage-reader')).items as Item[];
    expect(apps.some((a) => a.environment_type !== 'staging')).toBe(true);
    expect(apps.every((a) => typeof a.version === 'string')).toBe(true); // no record has id 999999
    stop.abort();
    expect((await exit).code).toBe(0);
  });

  it.each([
    [['--list-grading', 'sometimes'], /--list-grading must be one of environment, none, got "sometimes"/],
    [['--fault', 'runs.list=unreadableTime'], /--fault: unreadableTime needs :ID\|first/],
    [['--fault', 'runs.list=unreadableTime:last'], /--fault unreadableTime must be an integer, got "last"/],
    [['--fault', 'urls.list=oddValue:ssl_status'], /--fault: oddValue takes FIELD=VALUE\[@ID\]/],
  ])('exits 2 with usage on %j', async (args, message) => {
    const { code, stderr } = await runCli(['simulator', ...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
