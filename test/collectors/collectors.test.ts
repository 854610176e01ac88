/** Each collector against the simulator: complete snapshots, early stops, and failing whole. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type CallOptions } from '../../src/api/client.js';
import { ApiError, ApiResponseError } from '../../src/api/errors.js';
import { silentLogger } from '../../src/lib/logger.js';
import { collectAttention } from '../../src/collectors/collect-attention.js';
import { collectBackups } from '../../src/collectors/collect-backups.js';
import { collectInstallers } from '../../src/collectors/collect-installers.js';
import { collectMaintenance, RESTORE_POINTS_PER_APP } from '../../src/collectors/collect-maintenance.js';
import { collectRuns } from '../../src/collectors/collect-runs.js';
import { collectServers } from '../../src/collectors/collect-servers.js';
import { collectUrls } from '../../src/collectors/collect-urls.js';
import type { CollectorContext } from '../../src/collectors/collector-context.js';
import type { BackupsSeen } from '../../src/collectors/snapshot.js';
import { newestBackupView, type AppBackupState } from '../../src/collectors/views.js';
import { NamespaceError, resolveNamespaces } from '../../src/collectors/resolve-namespaces.js';
import { parseConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/lib/secret.js';
import { seeBackup, settledBy } from '../../src/collectors/backups-seen.js';
import { detectorOptionsFromConfig, extraReadsFor, relevanceFor, runDetectors } from '../../src/detectors/registry.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';

const DAY = 86_400_000;
let sim: RunningSimulator;
let client: ApiClient;

beforeAll(async () => {
  sim = await startSimulator({ apps: 30, seed: 7 });
  client = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(sim.adminToken),
    requestsPerSecond: 1000,
    maxRetries: 0,
    pageSize: 7,
  });
});
afterAll(async () => {
  await client.close();
  await sim.close();
});
beforeEach(() => {
  sim.control.clearFaults();
  sim.control.resetRequests();
});

function ctx(checksYaml = '', namespaces: readonly string[] | null = null): CollectorContext {
  const config = parseConfig(`api: { base_url: "http://127.0.0.1:1", token: t }\n${checksYaml}`, {}, 'test.yaml');
  // The reads beyond each job's own that the enabled checks ask for, as the job cycle passes them.
  const extraReads = extraReadsFor(detectorOptionsFromConfig(config.checks));
  return {
    client,
    namespaces,
    checks: config.checks,
    extraReads,
    now: sim.control.now(),
    concurrency: 4,
    logger: silentLogger,
  };
}

const calls = (fn: string) => sim.control.requests().filter((r) => r.fn === fn).length;

describe('collectUrls', () => {
  it('reads every URL record over many pages and the apps they belong to', async () => {
    const snapshot = await collectUrls(ctx());
    const total = (await client.urls.list({ limit: 1 })).total;
    expect(snapshot.urls).toHaveLength(total);
    expect(new Set(snapshot.urls.map((u) => u.id)).size).toBe(total);
    // Labels for the apps of those records that apps.list has (not a deleted one), and no other app.
    const listed = new Set((await client.apps.listAll()).map((a) => a.id));
    expect([...snapshot.apps.keys()].sort()).toEqual(
      [...new Set(snapshot.urls.map((u) => u.app_id))].filter((id) => listed.has(id)).sort(),
    );
    expect(calls('urls.list')).toBeGreaterThan(3);
  });

  it('keeps only the records an enabled check could report, reads every page still, and finds the same', async () => {
    const [first, second] = (await client.urls.list({ limit: 2 })).items;
    sim.control.checks.certificates.expire(first!.id, { inDays: 3 });
    sim.control.checks.url_checks.fail(second!.id, '502');
    sim.control.resetRequests();
    const full = ctx();
    const whole = await collectUrls(full);
    const pagesWhole = calls('urls.list');
    sim.control.resetRequests();
    const options = detectorOptionsFromConfig(full.checks);
    const kept = await collectUrls({ ...full, relevance: relevanceFor(options, full.now) });
    expect(calls('urls.list')).toBe(pagesWhole);
    expect(kept.urls.length).toBeGreaterThan(0);
    expect(kept.urls.length).toBeLessThan(whole.urls.length);
    expect([...kept.apps.keys()].every((id) => kept.urls.some((u) => u.app_id === id))).toBe(true);
    expect(runDetectors(kept, options, full.now)).toEqual(runDetectors(whole, options, full.now));
    // With a check off, its records are no longer kept.
    const certificatesOff = { ...options, certificates: undefined };
    const fewer = await collectUrls({ ...full, relevance: relevanceFor(certificatesOff, full.now) });
    // url_checks keeps the failed ones and those not checked (its max_check_age rule).
    expect(fewer.urls.every((u) => u.public_check === 'failed' || u.public_check === null)).toBe(true);
    expect(fewer.urls.some((u) => u.public_check === 'failed')).toBe(true);
  });

  it.each([
    ['a refused page of its second list', 'apps.list', { errorCode: 'internal_error' as const }, ApiError],
    ['an answer of the wrong type', 'urls.list', { wrongType: true }, ApiResponseError],
  ])('fails whole on %s', async (_what, fn, fault, type) => {
    sim.control.setFault(fn as 'apps.list', fault);
    await expect(collectUrls(ctx())).rejects.toBeInstanceOf(type);
  });
});

describe('collectRuns', () => {
  it('stops paging at the look-back, keeps every run inside it, and adds old runs still active', async () => {
    const now = sim.control.now();
    const old = sim.control.addRun({ appId: 4, state: 'running', startedAgoMs: 3 * DAY });
    sim.control.resetRequests();
    const snapshot = await collectRuns(ctx('checks: { failed_runs: { lookback: 1d } }'));
    const pagesRead = calls('runs.list');
    const all = await client.runs.listAll();
    const recent = all.filter((r) => Date.parse(r.created_at!) >= now - DAY).map((r) => r.id);
    const ids = snapshot.runs.map((r) => r.id);
    expect(ids.slice(0, recent.length).sort()).toEqual([...recent].sort());
    expect(ids).toContain(old.id);
    // Fewer pages than the whole list: the walk stopped early.
    expect(pagesRead).toBeLessThan(Math.ceil(all.length / 7) / 2);
    for (const run of snapshot.runs.filter((r) => ['error', 'running', 'queued'].includes(r.state))) {
      expect(snapshot.details.get(run.id)?.steps.length).toBeGreaterThan(0);
    }
  });

  it('keeps the labels of the apps whose runs can be findings only, and finds the same as with every app', async () => {
    sim.control.addRun({ appId: 5, state: 'error', startedAgoMs: DAY / 4 });
    const c = ctx('checks: { failed_runs: { lookback: 1d } }');
    const snapshot = await collectRuns(c);
    const wanted = new Set(['error', 'running', 'queued']);
    const labelled = new Set(
      snapshot.runs
        .filter((r) => r.app_id !== null && (wanted.has(r.state) || snapshot.details.has(r.id)))
        .map((r) => r.app_id),
    );
    expect([...snapshot.apps.keys()].every((id) => labelled.has(id))).toBe(true);
    expect(snapshot.apps.has(5)).toBe(true);
    expect(snapshot.apps.size).toBeLessThan(new Set(snapshot.runs.map((r) => r.app_id)).size);
    const everyApp = new Map((await client.apps.listAll()).map((a) => [a.id, a]));
    const options = detectorOptionsFromConfig(c.checks);
    expect(runDetectors(snapshot, options, c.now)).toEqual(
      runDetectors({ ...snapshot, apps: everyApp }, options, c.now),
    );
  });

  it("given what the checks can report, summarises the window's settled runs instead of keeping them, and finds the same", async () => {
    const failed = sim.control.addRun({ appId: 11, action: 'update', state: 'error', startedAgoMs: DAY / 2 });
    sim.control.addRun({ appId: 11, action: 'update', state: 'done', startedAgoMs: DAY / 4 }); // supersedes it
    const stillFailed = sim.control.addRun({ appId: 12, action: 'update', state: 'error', startedAgoMs: DAY / 8 });
    sim.control.addRun({ appId: 12, action: 'update', state: 'done', startedAgoMs: DAY / 3 }); // older: does not
    const c = ctx('checks: { failed_runs: { lookback: 1d } }');
    const options = detectorOptionsFromConfig(c.checks);
    const whole = await collectRuns(c);
    sim.control.resetRequests();
    const summarised = await collectRuns({ ...c, relevance: relevanceFor(options, c.now) });
    const wanted = new Set(['error', 'running', 'queued']);
    expect(summarised.runs.every((r) => wanted.has(r.state))).toBe(true);
    expect(summarised.runs.length).toBeLessThan(whole.runs.length);
    expect(summarised.settledNewest!.size).toBeGreaterThan(0);
    // The same runs.list pages read; the details of the same runs.
    expect([...summarised.details.keys()].sort()).toEqual([...whole.details.keys()].sort());
    const found = runDetectors(summarised, options, c.now);
    expect(found).toEqual(runDetectors(whole, options, c.now));
    const fingerprints = found.findings.map((f) => f.fingerprint);
    expect(fingerprints).not.toContain(`failed_runs/run/${failed.id}`);
    expect(fingerprints).toContain(`failed_runs/run/${stillFailed.id}`);
  });

  it('keeps a settled run an open alert is about, where it was listed, rather than reading it again', async () => {
    const settled = sim.control.addRun({ appId: 13, action: 'update', state: 'done', startedAgoMs: DAY / 6 });
    const c = {
      ...ctx('checks: { failed_runs: { lookback: 1d } }'),
      openSubjects: [{ check: 'stuck_runs' as const, subject: { type: 'run' as const, id: settled.id } }],
    };
    sim.control.resetRequests();
    const snapshot = await collectRuns({ ...c, relevance: relevanceFor(detectorOptionsFromConfig(c.checks), c.now) });
    expect(snapshot.runs.map((r) => r.id)).toContain(settled.id);
    expect(sim.control.requests().filter((r) => r.fn === 'runs.get' && r.path.endsWith(`/${settled.id}`))).toHaveLength(
      0,
    );
  });

  it("reads the runs of open alerts outside the look-back by id, with their app's runs since, and only those", async () => {
    const old = sim.control.addRun({ appId: 8, action: 'update', state: 'error', startedAgoMs: 3 * DAY });
    const newer = sim.control.addRun({ appId: 8, action: 'update', state: 'done', startedAgoMs: 2 * DAY });
    const unrelated = sim.control.addRun({ appId: 9, action: 'update', state: 'error', startedAgoMs: 3 * DAY });
    sim.control.resetRequests();
    const snapshot = await collectRuns({
      ...ctx('checks: { failed_runs: { lookback: 1d } }'),
      openSubjects: [
        { check: 'failed_runs', subject: { type: 'run', id: old.id } },
        // Not a run alert of the runs checks: not followed.
        { check: 'attention', subject: { type: 'attention', id: unrelated.id } },
      ],
    });
    const ids = snapshot.runs.map((r) => r.id);
    expect(ids).toContain(old.id);
    expect(ids).toContain(newer.id);
    expect(ids).not.toContain(unrelated.id);
    expect(snapshot.details.get(old.id)?.state).toBe('error');
    // `newer` is outside the look-back and settled: only the walk of app 8's runs brings it. The
    // followed run is read once (its detail is the runs.get answer, not read again).
    expect(
      sim.control.requests().filter((r) => r.fn === 'runs.get' && r.path.endsWith(`/runs/${old.id}`)),
    ).toHaveLength(1);
  });

  it('leaves a followed run out once runs.get no longer finds it', async () => {
    const snapshot = await collectRuns({
      ...ctx('checks: { failed_runs: { lookback: 1d } }'),
      openSubjects: [{ check: 'stuck_runs', subject: { type: 'run', id: 987_654 } }],
    });
    expect(snapshot.runs.map((r) => r.id)).not.toContain(987_654);
  });

  it('fails whole when one run detail cannot be read', async () => {
    sim.control.addRun({ appId: 5, state: 'error' });
    sim.control.setFault('runs.get', { errorCode: 'internal_error', times: 1 });
    await expect(collectRuns(ctx())).rejects.toMatchObject({ code: 'internal_error', fn: 'runs.get' });
  });
});

describe('collectBackups', () => {
  /** Ground truth for one app: its backups newest first, met as the check meets them until settled. */
  async function truthOf(appId: number, c: CollectorContext): Promise<BackupsSeen | undefined> {
    const b = c.checks.backups;
    const history = b.size_drop === null ? 0 : b.size_history;
    const app = (await client.apps.get(appId)) as AppBackupState;
    const horizon = c.now - (b.max_age[app.environment_type!] as number);
    let seen: BackupsSeen | undefined;
    for (const one of (await client.backups.list({ app_id: appId, limit: 100 }, { view: newestBackupView })).items) {
      seen = seeBackup(seen, one, b, history);
      if (settledBy(seen, one, horizon, history)) break;
    }
    return seen;
  }
  /** The client, with every `backups.list` call's query written down (the calls still go over HTTP). */
  function listing(): { client: ApiClient; queries: Record<string, unknown>[] } {
    const queries: Record<string, unknown>[] = [];
    const list = ((query: Parameters<ApiClient['backups']['list']>[0], opts: CallOptions) => {
      queries.push({ ...query });
      return client.backups.list(query, opts);
    }) as ApiClient['backups']['list'];
    return { client: { ...client, backups: { ...client.backups, list } }, queries };
  }

  it('finds the newest, newest finished and newest good backup of every watched app from a few pages of the newest-first list', async () => {
    const c = ctx();
    const snapshot = await collectBackups(c);
    const backupPages = calls('backups.list');
    const totalBackups = (await client.backups.list({ limit: 1 })).total;
    expect(backupPages).toBeLessThan(Math.ceil(totalBackups / 7) / 2);
    for (const app of snapshot.apps) {
      const watched = app.environment_type !== null && c.checks.backups.max_age[app.environment_type] !== null;
      if (!watched) expect(snapshot.backups.has(app.id)).toBe(false);
      else if (app.last_backup_at !== null)
        expect(snapshot.backups.get(app.id), `app ${app.id}`).toEqual(await truthOf(app.id, c));
    }
  });

  it('leaves unparsed the backups of apps already judged or not watched, and judges as the whole list does', async () => {
    let walked = 0;
    let handed = 0;
    const pages = ((...args: Parameters<ApiClient['backups']['pages']>) =>
      (async function* () {
        for await (const page of client.backups.pages(...args)) {
          walked += page.walked;
          handed += page.items.length;
          yield page;
        }
      })()) as ApiClient['backups']['pages'];
    const c = { ...ctx(), client: { ...client, backups: { ...client.backups, pages } } };
    const snapshot = await collectBackups(c);
    expect(handed).toBeLessThan(walked / 2);
    for (const app of snapshot.apps)
      if (app.last_backup_at !== null && snapshot.backups.has(app.id))
        expect(snapshot.backups.get(app.id), `app ${app.id}`).toEqual(await truthOf(app.id, c));
  });

  it('keeps only the apps the backups check could report, with their backups, and finds the same', async () => {
    sim.control.checks.backups.age(3, { hours: 24 * 30 });
    const c = ctx();
    const options = detectorOptionsFromConfig(c.checks);
    const whole = await collectBackups(c);
    const pagesWhole = calls('backups.list');
    sim.control.resetRequests();
    const kept = await collectBackups({ ...c, relevance: relevanceFor(options, c.now) });
    expect(calls('backups.list')).toBe(pagesWhole);
    expect(kept.apps.length).toBeGreaterThan(0);
    expect(kept.apps.length).toBeLessThan(whole.apps.length);
    expect(kept.apps.map((a) => a.id)).toContain(3);
    for (const id of kept.backups.keys()) expect(kept.apps.some((a) => a.id === id)).toBe(true);
    const found = runDetectors(kept, options, c.now);
    expect(found).toEqual(runDetectors(whole, options, c.now));
    expect(found.findings.length).toBeGreaterThan(0);
  });

  it('keeps of each backup the fields the detector reads, as answered, and nothing more', async () => {
    const snapshot = await collectBackups(ctx());
    const [appId, kept] = [...snapshot.backups][0]!;
    const full = (await client.backups.list({ app_id: appId, limit: 1 })).items[0]!;
    expect(kept.newest).toStrictEqual({
      id: full.id,
      name: full.name,
      app_id: full.app_id,
      taken_at: full.taken_at,
      state: full.state,
      format: full.format,
      size_mb: full.size_mb,
      verified: full.verified,
      on_server: full.on_server,
      offsite: full.offsite,
    });
  });

  it('judges staleness on the newest good backup: a failed or running newest keeps the app stale, and the same apps are kept', async () => {
    // 11: a failed backup on top of a two-day-old good one; 15: one running on top; 19: one running on a fresh good one.
    sim.control.checks.backups.age(11, { hours: 48 });
    const failedOne = sim.control.checks.backups.add(11, { state: 'failed', hoursAgo: 3, verified: false });
    sim.control.checks.backups.age(15, { hours: 48 });
    sim.control.checks.backups.add(15, { state: 'running', verified: false });
    sim.control.checks.backups.add(19, { state: 'running', verified: false });
    const c = ctx();
    const options = detectorOptionsFromConfig(c.checks);
    const whole = await collectBackups(c);
    const kept = await collectBackups({ ...c, relevance: relevanceFor(options, c.now) });
    const found = runDetectors(kept, options, c.now);
    expect(found).toEqual(runDetectors(whole, options, c.now));
    // The service's own backup_health follows the ages too; these tests are about the others.
    const about = (appId: number) =>
      found.findings
        .filter((f) => f.fingerprint.startsWith(`backups/app/${appId}/`) && f.labels.problem !== 'health')
        .map((f) => f.labels.problem);
    expect([about(11), about(15), about(19)]).toEqual([['stale', 'failed'], ['stale'], []]);
    expect(found.findings.find((f) => f.fingerprint === 'backups/app/11/failed')?.subject).toEqual({
      type: 'backup',
      id: failedOne.id,
    });
    expect(kept.apps.map((a) => a.id)).not.toContain(19);
    expect(whole.backups.get(15)?.newest.state).toBe('running');
    expect(whole.backups.get(15)?.good?.state).toBe('done');
  });

  it('reads an app on, a few backups a page, until one settles it; at most four pages, then it cannot tell', async () => {
    // 27: six failed backups over a good one 40h old and the good ones before it whose sizes it is
    // compared with (three pages: size_history 4); 22: failed ones, the second past
    // max_age (one page, the good one below it unread); 29: 25 failed within a day over a good one
    // 30h old (the bound).
    sim.control.checks.backups.age(27, { hours: 40 });
    for (let h = 1; h <= 6; h++) sim.control.checks.backups.add(27, { state: 'failed', hoursAgo: h });
    sim.control.checks.backups.age(22, { hours: 24 * 5 });
    for (const h of [1, 30]) sim.control.checks.backups.add(22, { state: 'failed', hoursAgo: h });
    sim.control.checks.backups.age(29, { hours: 30 });
    for (let i = 1; i <= 25; i++) sim.control.checks.backups.add(29, { state: 'failed', hoursAgo: i / 2 });
    const { client: watched, queries } = listing();
    const c = { ...ctx(), client: watched };
    const snapshot = await collectBackups(c);
    const perApp = (appId: number) => queries.filter((q) => q.app_id === appId).map((q) => [q.offset, q.limit]);
    expect([perApp(27), perApp(22), perApp(29)]).toEqual([
      [
        [0, 5],
        [5, 5],
        [10, 5],
      ],
      [[0, 5]],
      [
        [0, 5],
        [5, 5],
        [10, 5],
        [15, 5],
      ],
    ]);
    expect(snapshot.backups.get(27)).toEqual(await truthOf(27, c));
    expect(snapshot.backups.get(27)?.good?.state).toBe('done');
    expect(snapshot.backups.get(22)).toMatchObject({ stopped: 'max_age', finished: { state: 'failed' } });
    expect(snapshot.backups.get(22)?.good).toBeUndefined();
    expect(snapshot.backups.get(29)).toMatchObject({ stopped: 'bound', finished: { state: 'failed' } });
    const found = runDetectors(snapshot, detectorOptionsFromConfig(c.checks), c.now);
    // The service's own backup_health follows the ages too; these tests are about the others.
    const about = (appId: number) =>
      found.findings
        .filter((f) => f.fingerprint.startsWith(`backups/app/${appId}/`) && f.labels.problem !== 'health')
        .map((f) => f.labels.problem);
    expect([about(27), about(22), about(29)]).toEqual([['stale', 'failed'], ['stale', 'failed'], ['failed']]);
    expect(found.findings.find((f) => f.fingerprint === 'backups/app/22/stale')?.summary).toMatch(
      /^No successful backup of \S+ \(production\) within 1d 2h; newest: #\d+ failed 1h ago$/,
    );
    // What the unread good backups would say stays unknown: those alerts are neither raised nor resolved.
    expect(found.incomplete).toEqual([
      'backups/app/22/unverified',
      'backups/app/22/offsite/',
      'backups/app/22/no_offsite',
      'backups/app/22/lost',
      'backups/app/22/size',
      'backups/app/29/stale',
      'backups/app/29/unverified',
      'backups/app/29/offsite/',
      'backups/app/29/no_offsite',
      'backups/app/29/lost',
      'backups/app/29/size',
    ]);
  });
});

describe('collectAttention', () => {
  it('merges the answers of several namespaces into the summary of all of them', async () => {
    const scope = await resolveNamespaces(client, []);
    const all = await client.attention.list();
    const merged = await collectAttention(ctx('', scope.reached));
    expect(merged.summary.total).toBe(all.total);
    expect(merged.summary.sections.map((s) => s.rule).sort()).toEqual(all.sections.map((s) => s.rule).sort());
    expect(calls('attention.list')).toBe(1 + scope.reached!.length);
  });
});

describe('collectMaintenance', () => {
  it('reads every app in full, with its maintenance flag', async () => {
    sim.control.checks.maintenance.set(6, true);
    const snapshot = await collectMaintenance(ctx());
    expect(snapshot.apps).toHaveLength((await client.apps.list({ limit: 1 })).total);
    expect(snapshot.apps.find((a) => a.id === 6)?.maintenance).toBe(true);
    sim.control.checks.maintenance.set(6, false);
  });

  it('keeps only the apps in maintenance, off their branch or with an upgrade in trouble when given what the checks can report, after reading every one', async () => {
    sim.control.checks.maintenance.set(6, true);
    const c = ctx();
    const options = detectorOptionsFromConfig(c.checks);
    sim.control.resetRequests();
    const snapshot = await collectMaintenance({ ...c, relevance: relevanceFor(options, c.now) });
    expect(calls('apps.get')).toBe((await client.apps.list({ limit: 1 })).total);
    const every = await collectMaintenance(c);
    expect(snapshot.apps.map((a) => a.id)).toContain(6);
    expect(snapshot.apps).toEqual(
      every.apps.filter(
        (a) =>
          a.maintenance ||
          ['failed', 'standby', 'requested', 'testing'].includes(a.upgrade?.state ?? '') ||
          a.repositories.some(
            (r) => r.deleted_upstream || (a.environment_type === 'production' && r.up_to_date === false),
          ),
      ),
    );
    expect(snapshot.apps.length).toBeLessThan(every.apps.length);
    expect(runDetectors(snapshot, options, c.now)).toEqual(runDetectors(every, options, c.now));
    sim.control.checks.maintenance.set(6, false);
  });

  it('keeps of each apps.get answer the fields a finding uses, as answered, and nothing more', async () => {
    const snapshot = await collectMaintenance(ctx());
    const full = await client.apps.get(6);
    expect(snapshot.apps.find((a) => a.id === 6)).toStrictEqual({
      id: full.id,
      name: full.name,
      namespace: full.namespace,
      project: full.project,
      environment_type: full.environment_type,
      state: full.state,
      server: full.server,
      url: full.url,
      deployed_at: full.deployed_at,
      maintenance: full.maintenance,
      upgrade: full.upgrade,
      repositories: full.repositories.map((r) => ({
        repository: r.repository,
        branch: r.branch,
        deployed_sha: r.deployed_sha,
        head_sha: r.head_sha,
        up_to_date: r.up_to_date,
        checked_at: r.checked_at,
        deleted_upstream: r.deleted_upstream,
      })),
    });
  });
});

describe('collectMaintenance with the restore_points check', () => {
  it.each([
    ['off (the default)', '', 0],
    ['on', 'checks: { restore_points: { enabled: true } }', 1],
  ])('%s: reads %i page of restore points per app', async (_name, yaml, perApp) => {
    const apps = (await client.apps.list({ limit: 1 })).total;
    sim.control.resetRequests();
    const snapshot = await collectMaintenance(ctx(yaml));
    expect(calls('restore_points.list')).toBe(perApp * apps);
    expect(snapshot.restorePoints.size).toBe(perApp * apps);
    const queries = sim.control.requests().filter((r) => r.fn === 'restore_points.list');
    expect(queries.every((r) => r.query.includes(`limit=${RESTORE_POINTS_PER_APP}`))).toBe(true);
  });

  it('keeps the apps held at a restore point, with their newest points as answered', async () => {
    const held = sim.control.checks.restore_points.add(9, { held: true });
    const c = ctx('checks: { restore_points: { enabled: true } }');
    const snapshot = await collectMaintenance({
      ...c,
      relevance: relevanceFor(detectorOptionsFromConfig(c.checks), c.now),
    });
    expect(snapshot.apps.map((a) => a.id)).toContain(9);
    const [newest] = snapshot.restorePoints.get(9)!;
    expect(newest).toStrictEqual({
      id: held.id,
      at: held.at,
      action: held.action,
      outcome: held.outcome,
      run_id: held.run_id,
      held: true,
    });
    sim.control.checks.restore_points.setHeld(held.id, false);
  });
});

describe('collectInstallers', () => {
  it('reads every live marketplace service, page by page, with its state', async () => {
    const live = [...sim.control.state.installers.values()].filter((i) => i.state !== 'deleted');
    const target = live.find((i) => i.state === 'running')!;
    sim.control.checks.installers.setState(target.id, 'error');
    try {
      const snapshot = await collectInstallers(ctx());
      expect(snapshot.job).toBe('installers');
      expect(snapshot.installers.map((i) => i.id).sort((a, b) => a - b)).toEqual(
        live.map((i) => i.id).sort((a, b) => a - b),
      );
      expect(calls('installers.list')).toBe(Math.ceil(live.length / 7));
      expect(snapshot.installers.find((i) => i.id === target.id)?.state).toBe('error');
    } finally {
      sim.control.checks.installers.setState(target.id, 'running');
    }
  });
});

describe('collectServers', () => {
  /** The servers the simulator holds that `servers.list` gives (deleted ones left out). */
  const liveServers = () => [...sim.control.state.servers.values()].filter((s) => s.state !== 'deleted');

  it('reads every live server over pages of one, with its state and app count', async () => {
    const target = liveServers()[0]!;
    sim.control.checks.servers.setState(target.id, 'error');
    const small = createApiClient({
      baseUrl: sim.baseUrl,
      token: new Secret(sim.adminToken),
      requestsPerSecond: 1000,
      maxRetries: 0,
      pageSize: 1,
    });
    try {
      const snapshot = await collectServers({ ...ctx(), client: small });
      expect(snapshot.job).toBe('servers');
      expect(snapshot.servers.map((s) => s.id).sort((a, b) => a - b)).toEqual(
        liveServers()
          .map((s) => s.id)
          .sort((a, b) => a - b),
      );
      // One server per page: every page was read.
      expect(calls('servers.list')).toBeGreaterThanOrEqual(liveServers().length);
      expect(snapshot.servers.find((s) => s.id === target.id)?.state).toBe('error');
      const apps = await client.apps.listAll();
      for (const server of snapshot.servers) {
        expect(server.app_count, server.name).toBe(apps.filter((a) => a.server === server.name).length);
      }
    } finally {
      sim.control.checks.servers.setState(target.id, 'running');
      await small.close();
    }
  });

  it('reads each configured namespace once and keeps them all', async () => {
    const scope = await resolveNamespaces(client, []);
    sim.control.resetRequests();
    const snapshot = await collectServers(ctx('', scope.reached));
    expect(calls('servers.list')).toBe(scope.reached!.length);
    expect(new Set(snapshot.servers.map((s) => s.namespace))).toEqual(
      new Set(liveServers().map((s) => sim.control.state.namespace(s.nsId).code)),
    );
    expect(snapshot.servers).toHaveLength(liveServers().length);
  });

  it.each([
    ['a refused page', { errorCode: 'internal_error' as const }, ApiError],
    ['an answer of the wrong type', { wrongType: true }, ApiResponseError],
  ])('fails whole on %s', async (_what, fault, type) => {
    sim.control.setFault('servers.list', fault);
    await expect(collectServers(ctx())).rejects.toBeInstanceOf(type);
  });

  /** A running server with apps on it. */
  const withApps = () =>
    liveServers().find(
      (s) => s.state === 'running' && [...sim.control.state.apps.values()].some((a) => a.serverId === s.id),
    )!;

  it('lists the apps of a bad server with apps, their environments as answered, and none while every server is fine', async () => {
    const target = withApps();
    const fine = await collectServers(ctx());
    expect(calls('apps.list')).toBe(0);
    expect([...fine.appEnvironments.keys()]).toEqual([]);
    sim.control.checks.servers.setState(target.id, 'unreachable');
    try {
      sim.control.resetRequests();
      const snapshot = await collectServers(ctx());
      const listed = sim.control.requests().filter((r) => r.fn === 'apps.list');
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.every((r) => r.query.includes(`server_id=${target.id}`))).toBe(true);
      const apps = (await client.apps.listAll()).filter((a) => a.server === target.name);
      expect(snapshot.appEnvironments.get(target.id)).toEqual(apps.map((a) => a.environment_type));
      expect(snapshot.appsUnread).toBeUndefined();
    } finally {
      sim.control.checks.servers.setState(target.id, 'running');
    }
  });

  it.each(['function_not_allowed', 'access_denied'] as const)(
    'reads the servers on when apps.list answers %s, saying the apps are unread',
    async (code) => {
      const target = withApps();
      sim.control.checks.servers.setState(target.id, 'error');
      sim.control.setFault('apps.list', { errorCode: code });
      try {
        const snapshot = await collectServers(ctx());
        expect(snapshot.servers.find((s) => s.id === target.id)?.state).toBe('error');
        expect(snapshot.appEnvironments.size).toBe(0);
        expect(snapshot.appsUnread).toBe(`apps.list answered ${code}`);
      } finally {
        sim.control.checks.servers.setState(target.id, 'running');
      }
    },
  );

  it('fails whole when the apps of a bad server cannot be read for another reason', async () => {
    const target = withApps();
    sim.control.checks.servers.setState(target.id, 'error');
    sim.control.setFault('apps.list', { errorCode: 'internal_error' });
    try {
      await expect(collectServers(ctx())).rejects.toBeInstanceOf(ApiError);
    } finally {
      sim.control.checks.servers.setState(target.id, 'running');
    }
  });
});

describe('resolveNamespaces', () => {
  it('reads without the parameter when none is configured, and names a configured one the token does not reach', async () => {
    const scope = await resolveNamespaces(client, []);
    expect(scope.namespaces).toBeNull();
    expect(scope.reached!.length).toBeGreaterThan(0);
    const error = await resolveNamespaces(client, [scope.reached![0]!, 'nowhere']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NamespaceError);
    expect((error as Error).message).toMatch(/does not reach "nowhere"/);
  });

  it('reads a namespace configured by its name or id by its code, which every list takes', async () => {
    const [first, second] = (await client.whoami()).namespaces;
    expect(first!.name).not.toBe(first!.code);
    const scope = await resolveNamespaces(client, [first!.name, String(second!.id), first!.code]);
    expect(scope.namespaces).toEqual([first!.code, second!.code]);
    // The reference takes a namespace's code or id (§4); a name is namespace_not_found.
    for (const namespace of scope.namespaces!) await expect(client.apps.list({ namespace })).resolves.toBeDefined();
  });
});
