/**
 * The seed generator: a realistic, deterministic service (same seed, app count and start time give
 * the same data) with a sprinkle of problems so the attention summary and a demo have content.
 * Built for size: 10,000 apps (≈200,000 runs, 300,000 backups) seed in a couple of seconds; seeded
 * run history keeps no step objects (they are derived from the run's id when read).
 */
import type { EnvironmentType } from '../../../src/api/schemas.js';
import { Prng } from './prng.js';
import { AUTO_RETRY_DELAY_MS, leftAsBefore, RunEngine, seededRunLengthMs, startBackupRun } from './run-engine.js';
import { BACKUP_AGE_LIMITS } from './views.js';
import {
  runRec,
  upgradeRec,
  type AppRec,
  type BackupRec,
  type EnvironmentRec,
  type ProjectRec,
  type RepositoryRec,
  type RestorePointRec,
  type RunRec,
  type ServerRec,
  type SimState,
  type StepRec,
  type UrlRec,
} from './sim-state.js';
import {
  OFFSITE_FAILURES,
  PLANS,
  PUBLIC_CHECK_FAILURES,
  PUBLIC_CHECK_PASSED,
  STEP_FAILURE_REASONS,
  VOCABULARY,
  WORKFLOWS,
  type WorkflowName,
} from './vocabulary.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const NAMESPACES = [
  ['acme', 'Acme Retail'],
  ['globex', 'Globex Logistics'],
  ['initech', 'Initech Services'],
  ['umbrella', 'Umbrella Health'],
  ['stark', 'Stark Manufacturing'],
  ['wayne', 'Wayne Hospitality'],
  ['hooli', 'Hooli Media'],
  ['soylent', 'Soylent Foods'],
] as const;
const PREFIXES = [
  'north',
  'blue',
  'silver',
  'green',
  'iron',
  'bright',
  'rapid',
  'clear',
  'nova',
  'alpine',
  'coastal',
  'urban',
  'prime',
  'summit',
  'delta',
  'vertex',
  'harbor',
  'maple',
  'cedar',
  'orbit',
];
const PRODUCTS = [
  'erp',
  'shop',
  'crm',
  'portal',
  'hr',
  'books',
  'stock',
  'pos',
  'field',
  'rental',
  'clinic',
  'school',
  'events',
  'fleet',
  'dms',
  'helpdesk',
  'mrp',
  'payroll',
  'b2b',
  'wholesale',
];
const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south'];
const PROVIDERS = ['hetzner', 'aws', 'ovh', 'scaleway'];
const SIZES = ['cx31', 'cx41', 'cx51', 'm5.large', 'm5.xlarge'];
const VERSIONS = ['16.0', '17.0', '17.0', '18.0', '18.0', '18.0', '19.0'];
const INSTALLER_TYPES = ['postgres', 'redis', 'n8n', 'metabase', 'mailpit', 'minio'];
const COMMIT_MESSAGES = [
  'fix: rounding of invoice totals',
  'feat: partner portal export',
  'chore: bump dependencies',
  'fix: stock move report',
  'feat: new payroll rules 2026',
];
const ENV_SHORT: Record<EnvironmentType, string> = { production: 'prod', staging: 'staging', development: 'dev' };
/** Weighted actions of seeded run history (deploy comes first, once). */
const HISTORY_WORKFLOWS: WorkflowName[] = [
  ...Array<WorkflowName>(35).fill('app_update'),
  ...Array<WorkflowName>(30).fill('app_backup'),
  ...Array<WorkflowName>(15).fill('app_restart'),
  ...Array<WorkflowName>(14).fill('app_update_modules'),
  ...Array<WorkflowName>(3).fill('app_restore'),
  ...Array<WorkflowName>(3).fill('app_upgrade'),
];

/** What the seed is made from. */
export interface SeedOptions {
  apps: number;
  seed: number;
  /** Simulator time the data is generated for. */
  now: number;
}

/** Fills an empty SimState with seeded data. */
export function seedState(state: SimState, engine: RunEngine, options: SeedOptions): void {
  const { now } = options;
  const appCount = Math.max(1, Math.floor(options.apps));
  const rng = new Prng(options.seed);
  state.seededAt = now;

  // ---- namespaces ----
  const nsCount = Math.min(8, Math.max(2, Math.round(appCount / 250)));
  for (let i = 0; i < nsCount; i += 1) {
    const [code, name] = NAMESPACES[i] as readonly [string, string];
    const id = state.nextId('namespace');
    state.namespaces.set(id, { id, code, name, storage: `s3-${code}-backups` });
  }
  const nsIds = [...state.namespaces.keys()];

  // ---- servers ----
  const serverCount = Math.max(nsCount, Math.ceil(appCount / 15));
  const serversByNs = new Map<number, ServerRec[]>();
  for (let i = 0; i < serverCount; i += 1) {
    const server = makeServer(state, rng, nsIds[i % nsCount] as number, VOCABULARY.server.running);
    serversByNs.set(server.nsId, [...(serversByNs.get(server.nsId) ?? []), server]);
  }
  // One server in error: a real one on big seeds, an empty one on small seeds (so apps stay readable).
  if (serverCount >= 10) rng.pick([...state.servers.values()]).state = VOCABULARY.server.error;
  else makeServer(state, rng, nsIds[0] as number, VOCABULARY.server.error);
  makeServer(state, rng, nsIds[nsCount - 1] as number, VOCABULARY.server.deleted);

  // ---- projects, environments, apps ----
  const comboOffset = rng.int(0, 399);
  let projectIndex = 0;
  while (state.apps.size < appCount) {
    const project = makeProject(state, rng, projectIndex, comboOffset, nsIds[rng.int(0, nsCount - 1)] as number);
    projectIndex += 1;
    const layout: EnvironmentType[] = ['production'];
    if (rng.chance(0.8)) layout.push('staging');
    for (let d = rng.int(0, 2); d > 0; d -= 1) layout.push('development');
    let devIndex = 0;
    for (const type of layout) {
      if (state.apps.size >= appCount) break;
      const env = project.envIds
        .map((id) => state.environments.get(id) as EnvironmentRec)
        .find((e) => e.type === type) as EnvironmentRec;
      devIndex += type === 'development' ? 1 : 0;
      const suffix = type === 'development' && devIndex > 1 ? `-${devIndex}` : '';
      makeApp(
        state,
        rng,
        project,
        env,
        `${project.code}-${ENV_SHORT[type]}${suffix}`,
        serversByNs.get(project.nsId) ?? [],
        now,
      );
    }
  }
  // A deleted project (no apps left), for include_deleted.
  makeProject(state, rng, projectIndex, comboOffset, nsIds[0] as number).deleted = true;
  const apps = [...state.apps.values()];
  const liveApps = apps.filter((a) => a.state === VOCABULARY.app.running || a.state === VOCABULARY.app.stopped);
  /** How many records get a problem: a rate of the apps, at least `min` once there are 10 apps. */
  const sprinkle = (rate: number, min = 1) =>
    appCount >= 10 ? Math.max(min, Math.round(appCount * rate)) : rng.chance(rate * 10) ? 1 : 0;
  const pickApps = (n: number, from: AppRec[] = liveApps) => {
    const chosen = new Set<AppRec>();
    while (chosen.size < Math.min(n, from.length)) chosen.add(rng.pick(from));
    return [...chosen];
  };

  // ---- URLs ----
  for (const app of apps) makeUrls(state, rng, app, now);
  const activeUrls = liveApps
    .flatMap((a) => a.urlIds.map((id) => state.urls.get(id) as UrlRec))
    .filter((u) => u.state === VOCABULARY.url.active);
  const pickUrls = (n: number) => {
    const chosen = new Set<UrlRec>();
    while (activeUrls.length > 0 && chosen.size < Math.min(n, activeUrls.length)) chosen.add(rng.pick(activeUrls));
    return [...chosen];
  };
  for (const url of pickUrls(sprinkle(0.01))) url.sslExpiresAt = now + rng.int(1, 13) * DAY + rng.int(0, 23) * HOUR;
  for (const url of pickUrls(sprinkle(0.003))) url.sslExpiresAt = now - rng.int(1, 20) * DAY;
  for (const url of pickUrls(sprinkle(0.005))) {
    url.publicCheck = 'failed';
    url.publicCheckCode = rng.pick(PUBLIC_CHECK_FAILURES);
  }

  // ---- open upgrades, maintenance ----
  for (const app of pickApps(sprinkle(0.02))) app.upgrade = upgradeRec(state, app, VOCABULARY.upgrade.testing);
  const standby = pickApps(
    sprinkle(0.002),
    liveApps.filter((a) => !a.upgrade),
  );
  for (const app of standby) app.upgrade = upgradeRec(state, app, VOCABULARY.upgrade.standby);
  for (const app of pickApps(sprinkle(0.005))) app.maintenance = true;

  // ---- run history ----
  const history: RunRec[] = [];
  for (const app of apps) if (app.deployedAt !== null) history.push(...makeHistory(rng, app, now));
  for (const server of state.servers.values()) {
    if (server.state === VOCABULARY.server.deleted) continue;
    for (let k = 0; k < 2; k += 1)
      history.push(
        makeRun(
          null,
          server.nsId,
          'server_patch',
          now - rng.int(1, 59) * DAY - rng.int(0, 23) * HOUR,
          server.name,
          'server',
        ),
      );
  }
  // Every sprinkled app's newest update fails for good: failed runs that stay problems.
  for (const app of pickApps(sprinkle(0.006))) {
    const newest = history
      .filter((r) => r.appId === app.id && r.workflow === 'app_update')
      .sort((a, b) => b.createdAt - a.createdAt)[0];
    if (newest) failSeeded(rng, newest);
  }
  history.sort((a, b) => a.createdAt - b.createdAt);
  for (const run of history) {
    run.id = state.nextId('run');
    run.updatedAt = run.createdAt + seededRunLengthMs(options.seed, run.id, run.workflow, run.seedFailedStep);
    state.runs.set(run.id, run);
  }
  for (let i = history.length - 1; i >= 0; i -= 1) state.runIndex.appendSorted(history[i] as RunRec);

  // ---- restore points of updates in the last 30 days ----
  const points: RestorePointRec[] = [];
  for (const run of history) {
    if (
      run.appId === null ||
      (run.action !== 'update' && run.action !== 'update_modules') ||
      run.createdAt < now - 30 * DAY
    )
      continue;
    const app = state.apps.get(run.appId) as AppRec;
    const ok = run.state === VOCABULARY.run.done;
    points.push({
      id: state.nextId('restore_point'),
      appId: app.id,
      nsId: app.nsId,
      at: run.createdAt,
      action: run.action,
      outcome: ok ? 'applied' : leftAsBefore(run.workflow, run.seedFailedStep) ? 'kept' : 'failed',
      runId: run.id,
      commits:
        run.action === 'update'
          ? app.repositories.map((r) => ({ repository: r.repository, before: rng.hex(40), after: r.deployedSha }))
          : [],
      modules: run.action === 'update_modules' ? ['sale', 'stock'] : [],
      backupId: null,
      rollbackOfId: null,
      held: false,
      instantUndo: ok && run.createdAt > now - 7 * DAY,
      keptUntil: run.createdAt + 30 * DAY,
    });
  }
  for (const p of points) state.restorePoints.set(p.id, p);
  for (let i = points.length - 1; i >= 0; i -= 1) state.restorePointIndex.appendSorted(points[i] as RestorePointRec);

  // ---- backups: daily for 30 days ----
  const stale = new Set(pickApps(sprinkle(0.008)).map((a) => a.id));
  const unverified = new Set(pickApps(sprinkle(0.005)).map((a) => a.id));
  const offsiteFailed = new Set(pickApps(sprinkle(0.005)).map((a) => a.id));
  const backups: BackupRec[] = [];
  for (const app of apps) {
    if (app.deployedAt === null) continue;
    // A stale app's newest backup is past its environment's warning age (and sometimes critical).
    const shift = stale.has(app.id) ? BACKUP_AGE_LIMITS[app.envType ?? 'none'].warning + rng.int(2, 50) * HOUR : 0;
    const baseSize = rng.int(200, 20_000);
    let newest: BackupRec | null = null;
    for (let k = 29; k >= 0; k -= 1) {
      const takenAt = now - k * DAY - rng.int(1, 6) * HOUR - rng.int(0, 59) * 60_000 - shift;
      if (takenAt < app.deployedAt) continue;
      const backup: BackupRec = {
        id: 0,
        appId: app.id,
        nsId: app.nsId,
        takenAt,
        format: rng.chance(0.2) ? 'dump' : 'zip',
        sizeMb: Math.round(baseSize * (1 + (29 - k) * 0.002) * 10) / 10,
        automated: !rng.chance(0.1),
        state: rng.chance(0.005) ? VOCABULARY.backup.failed : VOCABULARY.backup.done,
        verified: true,
        offsite: null,
      };
      if (backup.state === VOCABULARY.backup.failed) backup.offsite = [];
      backups.push(backup);
      newest = backup;
    }
    if (newest) {
      newest.state = VOCABULARY.backup.done;
      // The newest is the day's scheduled full backup: a dump (the database alone) is never the only
      // recent one, so the steady estate has no stale alert the seed did not choose.
      newest.format = 'zip';
      if (newest.offsite?.length === 0) newest.offsite = null;
      if (unverified.has(app.id)) newest.verified = false;
      if (offsiteFailed.has(app.id)) {
        const ns = state.namespace(app.nsId);
        newest.offsite = [
          {
            storage: ns.storage,
            type: 's3',
            onStorage: false,
            state: VOCABULARY.offsite.failed,
            uploadedAt: null,
            error: rng.pick(OFFSITE_FAILURES),
          },
        ];
      }
    }
  }
  backups.sort((a, b) => a.takenAt - b.takenAt);
  for (const b of backups) {
    b.id = state.nextId('backup');
    state.backups.set(b.id, b);
  }
  for (let i = backups.length - 1; i >= 0; i -= 1) state.backupIndex.appendSorted(backups[i] as BackupRec);

  // ---- runs under way now: backups running, runs in error with an automatic retry due ----
  for (const app of pickApps(sprinkle(0.005)))
    startBackupRun(state, engine, app, 'zip', now - rng.int(5, 40) * 1000, true);
  for (const app of pickApps(sprinkle(0.003))) addRetryingRun(state, engine, rng, app, now);
  for (const app of apps) {
    if (app.state === VOCABULARY.app.deploying)
      engine.start({ app, workflow: 'app_deploy', now: now - rng.int(10, 60) * 1000, effect: { kind: 'deploy' } });
  }

  // ---- installers ----
  const installerCount = Math.max(1, Math.round(appCount / 10));
  for (let i = 0; i < installerCount; i += 1) {
    const nsId = nsIds[i % nsCount] as number;
    const servers = serversByNs.get(nsId) ?? [];
    const nsApps = liveApps.filter((a) => a.nsId === nsId);
    const type = rng.pick(INSTALLER_TYPES);
    const id = state.nextId('installer');
    const r = rng.next();
    const app = nsApps.length > 0 && rng.chance(0.5) ? rng.pick(nsApps) : null;
    const ns = state.namespace(nsId);
    state.installers.set(id, {
      id,
      name: `${type}-${id}`,
      nsId,
      type,
      appId: app?.id ?? null,
      state:
        r < 0.02
          ? VOCABULARY.installer.deleted
          : r < 0.04
            ? VOCABULARY.installer.error
            : r < 0.07
              ? VOCABULARY.installer.stopped
              : VOCABULARY.installer.running,
      serverId: servers.length > 0 ? rng.pick(servers).id : null,
      url: rng.chance(0.6) ? `https://${type}-${id}.${ns.code}.svc.example.com` : null,
      platformLogin: rng.chance(0.5),
    });
  }

  // ---- failed upgrades, branches deleted upstream, held restore points, services in error ----
  // Last, so the records above come out as they always did for a seed; these make sure an estate
  // of 10 apps or more has at least one of each, which makeRepo's and the installers' chances may not.
  const openUpgrade = liveApps.filter((a) => !a.upgrade);
  for (const app of pickApps(sprinkle(0.002), openUpgrade))
    app.upgrade = upgradeRec(state, app, VOCABULARY.upgrade.failed);
  for (const app of pickApps(sprinkle(0.003))) (app.repositories[0] as RepositoryRec).deletedUpstream = true;
  // Held: the app was rolled back to this point, and its auto-updates wait.
  for (const point of pickSome(
    rng,
    sprinkle(0.002),
    points.filter((p) => p.outcome === 'applied'),
  ))
    point.held = true;
  const running = [...state.installers.values()].filter((i) => i.state === VOCABULARY.installer.running);
  for (const installer of pickSome(rng, sprinkle(0.002), running)) installer.state = VOCABULARY.installer.error;
}

/** `n` distinct records of `from` (fewer when it has fewer). */
function pickSome<T>(rng: Prng, n: number, from: readonly T[]): T[] {
  const chosen = new Set<T>();
  while (chosen.size < Math.min(n, from.length)) chosen.add(rng.pick(from));
  return [...chosen];
}

function makeServer(state: SimState, rng: Prng, nsId: number, serverState: string): ServerRec {
  const id = state.nextId('server');
  const region = rng.pick(REGIONS);
  const server: ServerRec = {
    id,
    name: `srv-${region}-${String(id).padStart(3, '0')}`,
    nsId,
    state: serverState,
    provider: rng.pick(PROVIDERS),
    size: rng.pick(SIZES),
    region,
    image: rng.pick(['ubuntu-24.04', 'ubuntu-22.04', 'debian-12']),
    lbEngine: rng.pick(['traefik', 'nginx']),
    publicIp: `${rng.pick(['203.0.113', '198.51.100', '192.0.2'])}.${rng.int(2, 254)}`,
  };
  state.servers.set(id, server);
  return server;
}

function makeProject(state: SimState, rng: Prng, index: number, offset: number, nsId: number): ProjectRec {
  const combo = (index * 7 + offset) % 400;
  const round = Math.floor(index / 400);
  const prefix = PREFIXES[combo % 20] as string;
  const product = PRODUCTS[Math.floor(combo / 20)] as string;
  const id = state.nextId('project');
  const r = rng.next();
  const project: ProjectRec = {
    id,
    name: `${prefix[0]?.toUpperCase()}${prefix.slice(1)} ${product.length <= 3 ? product.toUpperCase() : product[0]?.toUpperCase() + product.slice(1)}${round > 0 ? ` ${round + 1}` : ''}`,
    code: `${prefix}-${product}${round > 0 ? `-${round + 1}` : ''}`,
    nsId,
    plan: r < 0.1 ? PLANS.starter : r < 0.75 ? PLANS.business : PLANS.enterprise,
    disabled: false,
    deleted: false,
    envIds: [],
  };
  for (const type of ['production', 'staging', 'development'] as const) {
    const envId = state.nextId('environment');
    state.environments.set(envId, {
      id: envId,
      name: type === 'production' ? 'Production' : type === 'staging' ? 'Staging' : 'Development',
      type,
      projectId: id,
    });
    project.envIds.push(envId);
  }
  state.projects.set(id, project);
  return project;
}

function makeApp(
  state: SimState,
  rng: Prng,
  project: ProjectRec,
  env: EnvironmentRec,
  name: string,
  servers: ServerRec[],
  now: number,
): AppRec {
  const id = state.nextId('app');
  const r = rng.next();
  const appState =
    r < 0.01
      ? VOCABULARY.app.deleted
      : r < 0.015
        ? VOCABULARY.app.disabled
        : r < 0.035
          ? VOCABULARY.app.stopped
          : r < 0.04
            ? VOCABULARY.app.deploying
            : VOCABULARY.app.running;
  const fresh = appState === VOCABULARY.app.deploying;
  const deployedAt = fresh ? null : now - rng.int(61, 900) * DAY;
  const edition = rng.chance(0.4) ? 'enterprise' : 'community';
  const ns = state.namespace(project.nsId);
  const repositories: RepositoryRec[] = [makeRepo(rng, project.code, ns.code, env.type, true, now)];
  if (edition === 'enterprise') repositories.push(makeRepo(rng, 'enterprise-addons', ns.code, env.type, false, now));
  if (rng.chance(0.3)) repositories.push(makeRepo(rng, 'oca-addons', ns.code, env.type, false, now));
  const app: AppRec = {
    id,
    name,
    nsId: project.nsId,
    projectId: project.id,
    envId: env.id,
    environment: env.name,
    envType: env.type,
    version: rng.pick(VERSIONS),
    edition,
    state: appState,
    serverId: servers.length > 0 ? rng.pick(servers).id : null,
    deployedAt,
    updatedAt: fresh ? null : now - rng.int(1, 40) * DAY,
    urlIds: [],
    repositories,
    upgrade: null,
    maintenance: false,
    locked: false,
  };
  state.apps.set(id, app);
  return app;
}

function makeRepo(
  rng: Prng,
  repository: string,
  org: string,
  envType: EnvironmentType,
  main: boolean,
  now: number,
): RepositoryRec {
  const head = rng.hex(40);
  const behind = rng.chance(0.1);
  return {
    repository,
    repositoryUrl: `https://github.com/${org}/${repository}`,
    branch: envType === 'production' ? 'main' : envType === 'staging' ? 'staging' : 'dev',
    main,
    deployedSha: behind ? rng.hex(40) : head,
    headSha: head,
    deployedMessage: rng.pick(COMMIT_MESSAGES),
    checkedAt: now - rng.int(1, 120) * 60_000,
    deletedUpstream: rng.chance(0.005),
  };
}

function makeUrls(state: SimState, rng: Prng, app: AppRec, now: number): void {
  const ns = state.namespace(app.nsId);
  const hosts = [`https://${app.name}.${ns.code}.dms.example.com`];
  if (rng.chance(0.85))
    hosts.push(
      `https://${app.envType === 'production' ? 'www' : (app.envType ?? 'app')}.${app.name.replace(/-(prod|staging|dev)(-\d+)?$/, '')}.example.${rng.pick(['com', 'net', 'org'])}`,
    );
  hosts.forEach((host, i) => {
    const id = state.nextId('url');
    const pending = app.deployedAt === null || rng.chance(0.02);
    const url: UrlRec = {
      id,
      url: i === 1 && app.envType !== 'production' ? `${host.replace('https://', `https://${id}-`)}` : host,
      appId: app.id,
      nsId: app.nsId,
      primary: i === 0,
      state: pending ? VOCABULARY.url.pending : VOCABULARY.url.active,
      sslFixed: pending ? 'unknown' : null,
      sslExpiresAt: pending ? null : now + rng.int(15, 89) * DAY + rng.int(0, 23) * HOUR,
      publicCheck: pending ? null : 'passed',
      publicCheckCode: pending ? null : PUBLIC_CHECK_PASSED,
      publicCheckedAt: pending ? null : now - rng.int(1, 360) * 60_000,
    };
    state.urls.set(id, url);
    app.urlIds.push(id);
  });
}

function makeRun(
  app: AppRec | null,
  nsId: number,
  workflow: WorkflowName,
  createdAt: number,
  record: string,
  recordType: string,
): RunRec {
  return runRec({ id: 0, appId: app?.id ?? null, nsId, workflow, record, recordType, createdAt });
}

function failSeeded(rng: Prng, run: RunRec): void {
  run.state = VOCABULARY.run.error;
  run.seedFailedStep = rng.int(0, WORKFLOWS[run.workflow].steps.length - 1);
  run.seedReason = rng.pick(STEP_FAILURE_REASONS);
}

/** About 20 runs over the last 60 days, the oldest the deploy; a few in a thousand fail. */
function makeHistory(rng: Prng, app: AppRec, now: number): RunRec[] {
  const count = rng.int(16, 24);
  const span = Math.min(60 * DAY, now - (app.deployedAt ?? now));
  const start = now - span;
  const runs: RunRec[] = [];
  for (let k = 0; k < count; k += 1) {
    const createdAt = Math.min(
      start + Math.floor(((k + rng.next()) * span) / count),
      now - HOUR - rng.int(0, 59) * 60_000,
    );
    const workflow = k === 0 && span < 60 * DAY ? 'app_deploy' : rng.pick(HISTORY_WORKFLOWS);
    const run = makeRun(app, app.nsId, workflow, createdAt, app.name, 'app');
    if (rng.chance(0.002)) failSeeded(rng, run);
    runs.push(run);
  }
  return runs;
}

/** A run failed a few minutes ago whose failed step retries by itself shortly. */
function addRetryingRun(state: SimState, engine: RunEngine, rng: Prng, app: AppRec, now: number): void {
  const workflow: WorkflowName = rng.pick(['app_update', 'app_update_modules', 'app_restart']);
  const run = makeRun(app, app.nsId, workflow, now - rng.int(6, 12) * 60_000, app.name, 'app');
  run.id = state.nextId('run');
  const failed = rng.int(0, WORKFLOWS[workflow].steps.length - 1);
  run.seedFailedStep = failed;
  run.seedReason = rng.pick(STEP_FAILURE_REASONS);
  run.state = VOCABULARY.run.error;
  const steps: StepRec[] = engine.stepsOf(run);
  run.steps = steps;
  run.seedFailedStep = null;
  run.seedReason = null;
  run.updatedAt = (steps[failed] as StepRec).updatedAt ?? run.createdAt;
  run.retrying = true;
  run.autoRetryAt = run.updatedAt + AUTO_RETRY_DELAY_MS;
  state.runs.set(run.id, run);
  state.runIndex.add(run);
  state.activeRuns.add(run.id);
}
