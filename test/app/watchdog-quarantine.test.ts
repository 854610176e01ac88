/**
 * One bad record is one bad record, end to end against the simulator: a record the token may not
 * read by id, one timestamp nobody can parse, one value beyond the stated ones. Each is set aside,
 * its alerts held (and saying why), the admin told once, and every other record judged as usual.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { Metrics } from '../../src/lib/metrics.js';
import { captureLogger, engineConfig, engineHarness, eventsOf, MINUTE, openWatchdog } from './fixtures.js';

const STAGING_ONLY = 'staging-only-reader-token';
const ONLY = (job: string) =>
  `jobs: { ${['runs', 'attention', 'urls', 'backups', 'maintenance', 'servers', 'installers']
    .filter((j) => j !== job)
    .map((j) => `${j}: "off"`)
    .join(', ')} }`;
const HOUR = 60 * MINUTE;

describe('a token that may read staging records by id, not production ones (lists ungraded)', () => {
  const h = engineHarness({
    listGrading: 'none',
    tokens: [{ token: STAGING_ONLY, namespaces: '*', permissions: '*', readEnvironments: ['staging'] }],
  });

  function appIn(env: 'production' | 'staging') {
    const app = [...h.sim.control.state.apps.values()].find((a) => a.envType === env && a.deployedAt !== null);
    if (!app) throw new Error(`no deployed ${env} app in the seed`);
    return app;
  }

  it('announces staging failures, holds production ones (never resolved), tells the admin once, counts them', async () => {
    const prod = h.sim.control.addRun({ appId: appIn('production').id, state: 'error', reason: 'disk full' });
    const staging = h.sim.control.addRun({ appId: appIn('staging').id, state: 'error', reason: 'bad module' });
    const metrics = new Metrics({ processMetrics: false });
    const log = captureLogger('debug');
    const wd: Watchdog = openWatchdog(
      engineConfig(h.sim, h.dir, `${ONLY('runs')}\nchecks: { failed_runs: { lookback: 1h } }`, STAGING_ONLY),
      h.clock,
      { metrics, logger: log.logger },
    );
    try {
      const first = await wd.runOnce();
      const runs = first.jobs.find((j) => j.job === 'runs')!;
      expect(runs.outcome).toBe('ok');
      expect(runs.skipped).toContainEqual(
        expect.objectContaining({ kind: 'run', id: prod.id, reason: 'access_denied', fn: 'runs.get' }),
      );
      expect(runs.skipped!.every((r) => r.reason === 'access_denied')).toBe(true);

      // The staging failure next to it is announced, with its steps (read by id).
      const stagingAlert = alertStoreOf(wd.store).get(`failed_runs/run/${staging.id}`)!;
      expect(stagingAlert.status).toBe('firing');
      expect(stagingAlert.details.held).toBeUndefined();
      // The production failure is told from the list alone, and says why it has no more.
      const prodAlert = alertStoreOf(wd.store).get(`failed_runs/run/${prod.id}`)!;
      expect(prodAlert.status).toBe('firing');
      expect(prodAlert.details.held).toBe('cannot be read now: access_denied; held, not resolved');
      expect(prodAlert.facts).toContainEqual({ label: 'Held', value: prodAlert.details.held });

      const watchdogAlert = alertStoreOf(wd.store).get('watchdog/records/runs/access_denied')!;
      expect(watchdogAlert.status).toBe('firing');
      expect(watchdogAlert.summary).toMatch(/^runs: \d+ runs? cannot be read now \(access_denied/);
      expect(watchdogAlert.summary).toMatch(/e\.g\. run \d+/);
      expect(watchdogAlert.details.records).toMatch(/^\d+ runs?$/);
      expect(watchdogAlert.labels.source).toBeUndefined(); // not an outage: it holds no other alert
      const metric = (await metrics.render())
        .split('\n')
        .find((l) => l.startsWith('deploy_watchdog_records_skipped_total{source="runs",reason="access_denied"}'));
      expect(Number(metric?.split(' ')[1])).toBeGreaterThanOrEqual(1);

      // Two hours on, the production run has left the list's window: it is read by id, refused,
      // and its alert is held (without the hold it would resolve as "no longer seen").
      h.clock.advance(2 * HOUR);
      const later = await wd.runOnce();
      expect(later.jobs.find((j) => j.job === 'runs')!.outcome).toBe('ok');
      expect(later.jobs.find((j) => j.job === 'runs')!.skipped).toContainEqual(
        expect.objectContaining({ id: prod.id, reason: 'access_denied' }),
      );
      expect(alertStoreOf(wd.store).get(`failed_runs/run/${prod.id}`)!.status).toBe('firing');
      expect(eventsOf(wd, `failed_runs/run/${prod.id}`).map((e) => e.kind)).toEqual(['firing']);
      expect(eventsOf(wd, 'watchdog/records/').map((e) => `${e.kind} ${e.fingerprint}`)).toEqual([
        'firing watchdog/records/runs/access_denied',
      ]);
    } finally {
      await wd.stop(1_000);
    }

    // The token is given production: nothing is set aside any more, the admin's alert resolves,
    // and the production failure, still failed, stays open (now with its steps, no held note).
    const full = openWatchdog(
      engineConfig(h.sim, h.dir, `${ONLY('runs')}\nchecks: { failed_runs: { lookback: 1h } }`),
      h.clock,
    );
    try {
      h.clock.advance(MINUTE);
      const report = await full.runOnce();
      expect(report.jobs.find((j) => j.job === 'runs')!.skipped).toBeUndefined();
      expect(alertStoreOf(full.store).get('watchdog/records/runs/access_denied')!.status).toBe('resolved');
      const prodAlert = alertStoreOf(full.store).get(`failed_runs/run/${prod.id}`)!;
      expect(prodAlert.status).toBe('firing');
      expect(prodAlert.details.held).toBeUndefined();
      expect(eventsOf(full, `failed_runs/run/${prod.id}`).map((e) => e.kind)).toEqual(['firing']);
    } finally {
      await full.stop(1_000);
    }
  });

  it('apps.get refused for production apps: the maintenance job reads every other app', async () => {
    const staging = appIn('staging');
    h.sim.control.checks.maintenance.set(staging.id, true);
    const wd = openWatchdog(engineConfig(h.sim, h.dir, ONLY('maintenance'), STAGING_ONLY), h.clock);
    try {
      const report = await wd.runOnce();
      const job = report.jobs.find((j) => j.job === 'maintenance')!;
      expect(job.outcome).toBe('ok');
      expect(job.skipped!.length).toBeGreaterThan(0);
      expect(job.skipped!.every((r) => r.kind === 'app' && r.reason === 'access_denied')).toBe(true);
      expect(alertStoreOf(wd.store).get('watchdog/records/maintenance/access_denied')?.status).toBe('firing');
    } finally {
      await wd.stop(1_000);
    }
  });
});

describe('one record of a list that cannot be parsed', () => {
  const h = engineHarness();

  it('one run whose timestamp no reader can parse: set aside, the other failures announced', async () => {
    const apps = [...h.sim.control.state.apps.values()].filter((a) => a.deployedAt !== null);
    const odd = h.sim.control.addRun({ appId: apps[0]!.id, state: 'error' });
    const fine = h.sim.control.addRun({ appId: apps[1]!.id, state: 'error' });
    h.sim.control.setFault('runs.list', { unreadableTime: { id: odd.id, field: 'updated_at' } });
    const log = captureLogger('debug');
    const wd = h.watchdog(ONLY('runs'), { logger: log.logger });
    const report = await wd.runOnce();
    const runs = report.jobs.find((j) => j.job === 'runs')!;
    expect(runs.outcome).toBe('ok');
    expect(runs.skipped).toEqual([
      expect.objectContaining({ kind: 'run', id: odd.id, reason: 'unreadable', fn: 'runs.list' }),
    ]);
    expect(runs.skipped![0]!.detail).toMatch(/^updated_at: /);
    expect(alertStoreOf(wd.store).get(`failed_runs/run/${fine.id}`)?.status).toBe('firing');
    expect(alertStoreOf(wd.store).get('watchdog/records/runs/unreadable')?.summary).toContain(`e.g. run ${odd.id}`);

    // The run's alert, once open, is held while its list item cannot be read.
    h.sim.control.clearFaults();
    h.clock.advance(MINUTE);
    await wd.runOnce();
    expect(alertStoreOf(wd.store).get(`failed_runs/run/${odd.id}`)?.status).toBe('firing');
    expect(alertStoreOf(wd.store).get('watchdog/records/runs/unreadable')?.status).toBe('resolved');
    h.sim.control.setFault('runs.list', { unreadableTime: { id: odd.id, field: 'created_at' } });
    h.clock.advance(MINUTE);
    await wd.runOnce();
    const held = alertStoreOf(wd.store).get(`failed_runs/run/${odd.id}`)!;
    expect(held.status).toBe('firing');
    expect(held.details.held).toMatch(/^cannot be read now: created_at: .*; held, not resolved$/);
    expect(eventsOf(wd, `failed_runs/run/${odd.id}`).map((e) => e.kind)).toEqual(['firing']);
  });
});

describe('one value beyond those the reference states', () => {
  const h = engineHarness();

  it('ssl_status "revoked" on one URL: the other URLs\' certificate alerts still work, warned once', async () => {
    const urls = [...h.sim.control.state.urls.values()];
    const [odd, expiring] = [urls[0]!, urls[1]!];
    h.sim.control.checks.certificates.expire(expiring.id, { inDays: 2 });
    h.sim.control.setFault('urls.list', { recordField: { id: odd.id, field: 'ssl_status', value: 'revoked' } });
    const log = captureLogger('debug');
    const wd = h.watchdog(ONLY('urls'), { logger: log.logger });
    const report = await wd.runOnce();
    const job = report.jobs.find((j) => j.job === 'urls')!;
    expect(job.outcome).toBe('ok');
    expect(job.skipped).toEqual([
      expect.objectContaining({
        kind: 'url',
        id: odd.id,
        reason: 'unknown_value',
        field: 'ssl_status',
        value: 'revoked',
      }),
    ]);
    expect(alertStoreOf(wd.store).get(`certificates/url/${expiring.id}`)?.status).toBe('firing');
    expect(alertStoreOf(wd.store).get('watchdog/records/urls/unknown_value')?.summary).toContain(
      `urls: 1 URL set aside for a value beyond those the reference states, e.g. URL ${odd.id}`,
    );

    h.clock.advance(15 * MINUTE);
    await wd.runOnce();
    // The alert (told through the log channel) names it too; the warning is said once.
    const warnings = log.lines().filter((l) => String(l.msg).includes('"revoked"') && l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain('urls.list reports ssl_status "revoked" (1 url, e.g. id');
  });
});

describe('a value beyond the stated ones the admin makes known (api.extra_values)', () => {
  const h = engineHarness();

  it('is set aside with a message naming the key to set; once set, the record is read as the value it means', async () => {
    const urls = [...h.sim.control.state.urls.values()];
    const odd = urls[0]!;
    h.sim.control.setFault('urls.list', { recordField: { id: odd.id, field: 'ssl_status', value: 'revoked' } });
    const log = captureLogger('debug');
    const wd = h.watchdog(ONLY('urls'), { logger: log.logger });
    const first = (await wd.runOnce()).jobs.find((j) => j.job === 'urls')!;
    expect(first.skipped).toEqual([
      expect.objectContaining({
        id: odd.id,
        reason: 'unknown_value',
        configKey: 'api.extra_values.ssl_status.revoked',
      }),
    ]);
    const alert = alertStoreOf(wd.store).get('watchdog/records/urls/unknown_value')!;
    expect(alert.status).toBe('firing');
    expect(alert.summary).toContain(
      `e.g. URL ${odd.id} (ssl_status "revoked": set api.extra_values.ssl_status.revoked to the stated value it means)`,
    );
    expect(alert.details.config_key).toBe('api.extra_values.ssl_status.revoked');
    expect(log.text()).toContain('or api.extra_values.ssl_status.revoked says which stated value it means');

    // The admin says what it means: the URL is read as an `error` certificate, judged as any.
    const config = h.config(ONLY('urls'));
    await wd.reload({ ...config, api: { ...config.api, extra_values: { ssl_status: { revoked: 'error' } } } });
    h.clock.advance(15 * MINUTE);
    const second = (await wd.runOnce()).jobs.find((j) => j.job === 'urls')!;
    expect(second.outcome).toBe('ok');
    expect(second.skipped).toBeUndefined();
    expect(alertStoreOf(wd.store).get('watchdog/records/urls/unknown_value')?.status).toBe('resolved');
    const judged = alertStoreOf(wd.store).get(`certificates/url/${odd.id}`);
    expect(judged?.status).toBe('firing');
    expect(judged?.summary).toMatch(/error/i);
  });
});

/**
 * The adversary pass, end to end: for each job, one record with an open alert is broken (a field of
 * no declared type, an unparseable timestamp, a word beyond a stated set) while another record has
 * one too. The job completes, the broken record is set aside and its alert held, and every other
 * alert of the job is as it was: nothing resolved, nothing blinded.
 */
describe('each job with one record broken in turn', () => {
  const h = engineHarness({ apps: 30 });
  type Setup = (c: typeof h.sim.control) => { target: string; other: string; id: number };
  const liveApps = (c: typeof h.sim.control) =>
    [...c.state.apps.values()].filter((a) => a.deployedAt !== null && a.state === 'running' && a.urlIds.length > 0);

  const runs: Setup = (c) => {
    const [a, b] = liveApps(c);
    const target = c.addRun({ appId: a!.id, state: 'error' });
    const other = c.addRun({ appId: b!.id, state: 'error' });
    return { target: `failed_runs/run/${target.id}`, other: `failed_runs/run/${other.id}`, id: target.id };
  };
  const urls: Setup = (c) => {
    const [a, b] = liveApps(c);
    c.checks.certificates.expire(a!.urlIds[0]!, { inDays: 1 });
    c.checks.certificates.expire(b!.urlIds[0]!, { inDays: 1 });
    return { target: `certificates/url/${a!.urlIds[0]}`, other: `certificates/url/${b!.urlIds[0]}`, id: a!.urlIds[0]! };
  };
  const maintenance: Setup = (c) => {
    const [a, b] = liveApps(c);
    c.checks.maintenance.set(a!.id, true);
    c.checks.maintenance.set(b!.id, true);
    return { target: `maintenance/app/${a!.id}`, other: `maintenance/app/${b!.id}`, id: a!.id };
  };
  const installers: Setup = (c) => {
    const [a, b] = [...c.state.installers.values()].filter((i) => i.state === 'running');
    c.checks.installers.setState(a!.id, 'error');
    c.checks.installers.setState(b!.id, 'error');
    return { target: `installers/installer/${a!.id}`, other: `installers/installer/${b!.id}`, id: a!.id };
  };

  const backups: Setup = (c) => {
    const [a, b] = liveApps(c).filter((x) => x.envType === 'production' && c.state.backupIndex.byApp(x.id).length > 0);
    c.checks.backups.age(a!.id, { hours: 24 * 30 });
    c.checks.backups.age(b!.id, { hours: 24 * 30 });
    // The target is the app's newest backup: the one its staleness is judged by.
    const newest = c.state.backupIndex.byApp(a!.id)[0]!;
    return { target: `backups/app/${a!.id}/stale`, other: `backups/app/${b!.id}/stale`, id: newest.id };
  };
  const SETUPS = { runs, urls, maintenance, installers, backups } as const;
  it.each([
    ['runs', 'runs.list', 'state', { broken: true }, 'unreadable'],
    ['runs', 'runs.list', 'updated_at', 'sometime yesterday', 'unreadable'],
    ['runs', 'runs.list', 'environment_type', 'preprod', 'unknown_value'],
    ['runs', 'runs.list', 'retrying', 'no', 'unreadable'],
    ['urls', 'urls.list', 'ssl_status', 'revoked', 'unknown_value'],
    ['urls', 'urls.list', 'ssl_expires_at', 'sometime yesterday', 'unreadable'],
    ['urls', 'urls.list', 'app_id', null, 'unreadable'],
    ['urls', 'urls.list', 'public_check', 'skipped', 'unknown_value'],
    ['maintenance', 'apps.get', 'maintenance', 'yes', 'unreadable'],
    ['maintenance', 'apps.get', 'repositories.0.branch', 42, 'unreadable'],
    ['maintenance', 'apps.get', 'environment_type', 'preprod', 'unknown_value'],
    ['installers', 'installers.list', 'state', 7, 'unreadable'],
    ['installers', 'installers.list', 'platform_login', null, 'unreadable'],
    ['backups', 'backups.list', 'taken_at', 'sometime yesterday', 'unreadable'],
    ['backups', 'backups.list', 'verified', 'yes', 'unreadable'],
  ] as const)('%s: %s %s = %j', async (job, fn, field, value, reason) => {
    const { target, other, id } = SETUPS[job](h.sim.control);
    const wd = h.watchdog(`${ONLY(job)}\nchecks: { maintenance: { max_duration: 1m } }`);
    await wd.runOnce([job]);
    h.clock.advance(2 * MINUTE);
    await wd.runOnce([job]);
    const before = firingOf(wd, job);
    expect(before).toEqual(expect.arrayContaining([target, other]));

    h.sim.control.setFault(fn, { recordField: { field, value, id } });
    for (let cycle = 0; cycle < 2; cycle++) {
      h.clock.advance(2 * MINUTE);
      const report = (await wd.runOnce([job])).jobs[0]!;
      expect(report.outcome).toBe('ok');
      expect(report.skipped).toEqual([expect.objectContaining({ id, reason })]);
    }
    // Every alert open before is still open (a check of the job may have found more since).
    expect(firingOf(wd, job)).toEqual(expect.arrayContaining(before));
    expect(alertStoreOf(wd.store).get(target)!.details.held).toMatch(/held, not resolved$/);
    expect(alertStoreOf(wd.store).get(other)!.details.held).toBeUndefined();
    expect(eventsOf(wd, '').filter((e) => e.kind === 'resolved')).toEqual([]);
    expect(alertStoreOf(wd.store).get(`watchdog/records/${job}/${reason}`)?.status).toBe('firing');
  });
});

/**
 * The same id twice in one page is no shift (a shift moves records between two reads): it is the
 * service's own list, the same at every walk. Read as a shift, it failed the job whole every cycle,
 * after three walks each; the repeat is set aside instead, and holds that record's alerts.
 */
describe('one id listed twice in one page', () => {
  const h = engineHarness({ apps: 20 });

  it('urls: the repeat set aside, its alert held, the rest of the list read in one walk', async () => {
    const { control } = h.sim;
    const [a, b, c] = [...control.state.apps.values()].filter((x) => x.urlIds.length > 0);
    control.checks.certificates.expire(a!.urlIds[0]!, { inDays: 1 });
    control.checks.certificates.expire(b!.urlIds[0]!, { inDays: 1 });
    const [target, other] = [`certificates/url/${a!.urlIds[0]}`, `certificates/url/${b!.urlIds[0]}`];
    const wd = h.watchdog(ONLY('urls'));
    await wd.runOnce(['urls']);
    expect(firingOf(wd, 'urls')).toEqual(expect.arrayContaining([target, other]));

    control.setFault('urls.list', { recordField: { id: c!.urlIds[0]!, field: 'id', value: a!.urlIds[0]! } });
    control.resetRequests();
    h.clock.advance(15 * MINUTE);
    const report = (await wd.runOnce(['urls'])).jobs[0]!;
    expect(report.outcome).toBe('ok');
    expect(report.skipped).toEqual([expect.objectContaining({ id: a!.urlIds[0], reason: 'unreadable' })]);
    expect(control.requests().filter((r) => r.fn === 'urls.list')).toHaveLength(1);
    expect(alertStoreOf(wd.store).get(target)!.details.held).toMatch(/came twice in one page.*held, not resolved$/);
    expect(alertStoreOf(wd.store).get(other)!.details.held).toBeUndefined();
    expect(eventsOf(wd, '').filter((e) => e.kind === 'resolved')).toEqual([]);
  });
});

/**
 * The attention summary is not a list, but each of its sections is a record: one section with a
 * severity beyond the stated ones, a count that is not a number, or an item that is not an object
 * is set aside, its items' alerts held; the other sections are read and told as usual.
 */
describe('one section of the attention summary broken', () => {
  const h = engineHarness({ apps: 60 });

  it.each([
    ['severity', 'critical', 'unknown_value'],
    ['kind', 'host', 'unknown_value'],
    ['count', 'many', 'unreadable'],
    ['items.0', 'junk', 'unreadable'],
  ] as const)('sections[0].%s = %j: set aside, the other sections read', async (field, value, reason) => {
    const wd = h.watchdog(ONLY('attention'));
    await wd.runOnce(['attention']);
    const before = alertStoreOf(wd.store)
      .open()
      .filter((a) => a.check === 'attention');
    expect(before.length).toBeGreaterThan(2);

    h.sim.control.setFault('attention.list', { recordField: { field: `sections.0.${field}`, value } });
    h.clock.advance(5 * MINUTE);
    const report = (await wd.runOnce(['attention'])).jobs[0]!;
    expect(report.outcome).toBe('ok');
    expect(report.skipped).toEqual([expect.objectContaining({ kind: 'attention_section', reason })]);
    // The other sections' items are still found; nothing resolved, every alert still open.
    expect(report.findings).toBeGreaterThan(0);
    expect(eventsOf(wd, 'attention/').filter((e) => e.kind === 'resolved')).toEqual([]);
    const open = new Set(
      alertStoreOf(wd.store)
        .open()
        .map((a) => a.fingerprint),
    );
    for (const alert of before) expect(open).toContain(alert.fingerprint);
    expect(alertStoreOf(wd.store).get(`watchdog/records/attention/${reason}`)?.summary).toContain(
      '1 attention section',
    );
  });
});

/**
 * The jobs that tick together (backups at :00, maintenance every 30 minutes) share one `apps.list`
 * read (`SharedApps`): an app that list sets aside is as unseen by the job that uses the answer as
 * by the one that read it, and its alerts there are held too, never resolved as gone.
 */
describe('one app of the shared apps.list broken, the answer used by another job', () => {
  const h = engineHarness({ apps: 20 });
  const BOTH = 'jobs: { runs: "off", attention: "off", urls: "off", servers: "off", installers: "off" }';

  it.each([
    ['backups', 'maintenance'],
    ['maintenance', 'backups'],
  ] as const)('read by %s first: every alert of the app is held in both jobs', async (first, second) => {
    const { control } = h.sim;
    const app = [...control.state.apps.values()].find((a) => a.envType === 'production' && a.deployedAt !== null)!;
    control.checks.app_state.set(app.id, 'stopped');
    control.checks.maintenance.set(app.id, true);
    const wd = h.watchdog(`${BOTH}\nchecks: { maintenance: { max_duration: 1m } }`);
    await wd.runOnce(['backups', 'maintenance']);
    h.clock.advance(2 * MINUTE);
    await wd.runOnce(['backups', 'maintenance']);
    const held = [`app_state/app/${app.id}`, `maintenance/app/${app.id}`];
    for (const fingerprint of held) expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');

    control.setFault('apps.list', { recordField: { id: app.id, field: 'backup_health', value: 'pending' } });
    for (let cycle = 0; cycle < 2; cycle++) {
      h.clock.advance(30 * MINUTE);
      const jobs = (await wd.runOnce([first, second])).jobs;
      expect(jobs.map((j) => [j.job, j.outcome, j.skipped?.map((r) => r.id)])).toEqual([
        [first, 'ok', [app.id]],
        [second, 'ok', [app.id]],
      ]);
    }
    for (const fingerprint of held) {
      expect(alertStoreOf(wd.store).get(fingerprint)?.details.held).toMatch(/backup_health.*held, not resolved$/);
    }
    expect(eventsOf(wd, '').filter((e) => e.kind === 'resolved')).toEqual([]);
  });
});

/**
 * An app's backups are judged on its newest backup. Set that one aside and the next older one would
 * judge the app instead: a false "no successful backup" page. And an alert about one backup (not
 * verified) belongs to its app: the app set aside holds it too, never resolves it.
 */
describe('a backup or an app set aside in the backups job', () => {
  const h = engineHarness({ apps: 20 });
  const BACKUPS = ONLY('backups');
  const productionApp = () =>
    [...h.sim.control.state.apps.values()].find(
      (a) =>
        a.envType === 'production' && a.deployedAt !== null && h.sim.control.state.backupIndex.byApp(a.id).length > 0,
    )!;

  it('the newest backup set aside: the app is not judged on an older one (no stale page)', async () => {
    const { control } = h.sim;
    const app = productionApp();
    control.checks.backups.age(app.id, { hours: 24 * 30 });
    const newest = control.checks.backups.add(app.id, { hoursAgo: 1 });
    const wd = h.watchdog(BACKUPS);
    await wd.runOnce(['backups']);
    expect(alertStoreOf(wd.store).get(`backups/app/${app.id}/stale`)).toBeUndefined();

    control.setFault('backups.list', { unreadableTime: { id: newest.id, field: 'taken_at' } });
    h.clock.advance(2 * MINUTE);
    const report = (await wd.runOnce(['backups'])).jobs[0]!;
    expect(report.skipped).toEqual([expect.objectContaining({ id: newest.id, reason: 'unreadable' })]);
    expect(alertStoreOf(wd.store).get(`backups/app/${app.id}/stale`)).toBeUndefined();
  });

  it('the app set aside: the alert about its newest backup is held, not resolved', async () => {
    const { control } = h.sim;
    const app = productionApp();
    control.checks.backups.add(app.id, { hoursAgo: 1, verified: false });
    const wd = h.watchdog(BACKUPS);
    await wd.runOnce(['backups']);
    h.clock.advance(2 * MINUTE);
    await wd.runOnce(['backups']);
    const fingerprint = `backups/app/${app.id}/unverified`;
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');

    control.setFault('apps.list', { unreadableTime: { id: app.id, field: 'updated_at' } });
    h.clock.advance(2 * MINUTE);
    const report = (await wd.runOnce(['backups'])).jobs[0]!;
    expect(report.skipped).toEqual([expect.objectContaining({ kind: 'app', id: app.id })]);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');
    expect(alertStoreOf(wd.store).get(fingerprint)?.details.held).toMatch(/updated_at.*held, not resolved$/);
    expect(eventsOf(wd, '').filter((e) => e.kind === 'resolved')).toEqual([]);
  });
});

/** The fingerprints of the job's firing alerts, sorted. */
function firingOf(wd: Watchdog, job: string): string[] {
  return (
    wd.store.db
      .prepare(`SELECT fingerprint FROM alerts WHERE job = ? AND status = 'firing' ORDER BY fingerprint`)
      .all(job) as { fingerprint: string }[]
  ).map((r) => r.fingerprint);
}
