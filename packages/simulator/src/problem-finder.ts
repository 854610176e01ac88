/**
 * What is wrong in the simulated service right now, derived from its records: the source of the
 * attention summary (`attention.list`) and of `control.problems()`, which a soak test compares
 * with the daemon's open alerts.
 */
import type { AttentionSection, AttentionSummary, EnvironmentType } from '../../../src/api/schemas.js';
import type { RunEngine } from './run-engine.js';
import type { AppRec, RunRec, SimState } from './sim-state.js';
import { VOCABULARY } from './vocabulary.js';
import { BACKUP_AGE_LIMITS, isGone, iso, type Views } from './views.js';

/** The kinds of problem the simulator knows about; each is one attention rule. */
export type ProblemKind =
  | 'failed_run'
  | 'certificate_expired'
  | 'public_check_failed'
  | 'backup_critical'
  | 'offsite_failed'
  | 'certificate_expiring'
  | 'backup_stale'
  | 'backup_unverified'
  | 'retrying_run'
  | 'maintenance'
  | 'app_not_answering';

/** One known problem. `id` is the record it is about: run, URL, backup or app, by kind. */
export interface SimProblem {
  kind: ProblemKind;
  id: number;
  appId: number;
  app: string;
  namespace: string;
  environmentType: EnvironmentType | null;
  detail: string;
}

/** Each rule's attention section: severity, label and item kind. Order breaks severity ties. */
const RULES: Record<
  ProblemKind,
  { severity: AttentionSection['severity']; label: string; kind: AttentionSection['kind'] }
> = {
  failed_run: { severity: 'danger', label: 'Failed runs', kind: 'failure' },
  certificate_expired: { severity: 'danger', label: 'Expired certificates', kind: 'url' },
  public_check_failed: { severity: 'danger', label: 'URLs that do not answer as their app', kind: 'url' },
  backup_critical: { severity: 'danger', label: 'Backups critically old', kind: 'app' },
  offsite_failed: { severity: 'warning', label: 'Off-site backup copies failed', kind: 'app' },
  certificate_expiring: { severity: 'warning', label: 'Certificates expiring soon', kind: 'url' },
  backup_stale: { severity: 'warning', label: 'Backups getting old', kind: 'app' },
  backup_unverified: { severity: 'warning', label: 'Newest backup not verified', kind: 'app' },
  retrying_run: { severity: 'info', label: 'Runs retrying by themselves', kind: 'failure' },
  maintenance: { severity: 'info', label: 'Apps in maintenance', kind: 'app' },
  app_not_answering: { severity: 'danger', label: 'Apps not answering', kind: 'app' },
};
const SEVERITY_ORDER = { danger: 0, warning: 1, info: 2 } as const;
/** Items per attention section (reference §8). */
const SECTION_ITEMS = 20;

/** Derives problems and the attention summary from the current records. */
export class ProblemFinder {
  constructor(
    private readonly state: SimState,
    private readonly views: Views,
    private readonly engine: RunEngine,
  ) {}

  /**
   * Every problem now, in the given namespaces (all when omitted) and of the apps `keep` lets
   * through (the caller's readable environments; all when omitted), with the items attention shows.
   */
  find(
    now: number,
    nsIds?: ReadonlySet<number>,
    keep?: (app: AppRec) => boolean,
  ): { problem: SimProblem; item: Record<string, unknown> }[] {
    const out: { problem: SimProblem; item: Record<string, unknown> }[] = [];
    for (const app of this.state.apps.values()) {
      if (isGone(app.state) || (nsIds && !nsIds.has(app.nsId)) || (keep && !keep(app))) continue;
      const ns = this.state.namespace(app.nsId).code;
      const project = this.state.projectOf(app).name;
      const base = { appId: app.id, app: app.name, namespace: ns, environmentType: app.envType };
      const appItem = (detail: string, since: number | null, extra: Record<string, unknown> = {}) => ({
        id: app.id,
        app_id: app.id,
        name: app.name,
        namespace: ns,
        project,
        environment_type: app.envType,
        detail,
        since: this.views.time(since),
        ...extra,
      });
      // Runs: the newest run of each action decides.
      const seen = new Set<string>();
      for (const run of this.state.runIndex.byApp(app.id)) {
        if (seen.has(run.action)) continue;
        seen.add(run.action);
        if (run.state !== VOCABULARY.run.error) continue;
        const kind: ProblemKind = run.retrying ? 'retrying_run' : 'failed_run';
        // The records' own words: the answers' may be another vocabulary.
        const step = this.engine.stepsOf(run).find((s) => s.state === VOCABULARY.step.error);
        const reason = step?.reason ?? this.engine.watcherOf(run)?.reason ?? null;
        out.push({
          problem: {
            kind,
            id: run.id,
            ...base,
            detail: `${run.action} failed${step ? ` at ${step.name}` : ''}: ${reason ?? 'unknown'}`,
          },
          item: this.failureItem(run, app, ns, project, step?.name ?? null, reason),
        });
      }
      for (const urlId of app.urlIds) {
        const url = this.state.urls.get(urlId);
        if (!url) continue;
        const status = this.views.sslStatus(url, now);
        const item = {
          id: url.id,
          url: url.url,
          app_id: app.id,
          app: app.name,
          namespace: ns,
          environment_type: app.envType,
          ssl_status: status,
          ssl_expires_at: this.views.time(url.sslExpiresAt),
          public_check: url.publicCheck,
          public_check_code: url.publicCheckCode,
        };
        if (status === 'expired' || status === 'expiring_soon') {
          const kind = status === 'expired' ? 'certificate_expired' : 'certificate_expiring';
          out.push({
            problem: {
              kind,
              id: url.id,
              ...base,
              detail: `${url.url}: certificate ${status === 'expired' ? 'expired' : 'expires'} ${iso(url.sslExpiresAt)}`,
            },
            item,
          });
        }
        if (url.publicCheck === 'failed') {
          out.push({
            problem: {
              kind: 'public_check_failed',
              id: url.id,
              ...base,
              detail: `${url.url}: outside check failed (${url.publicCheckCode ?? 'unknown'})`,
            },
            item,
          });
        }
      }
      const newest = this.views.newestDoneBackup(app.id);
      if (newest) {
        const limits = BACKUP_AGE_LIMITS[app.envType ?? 'none'];
        const age = now - newest.takenAt;
        const hours = Math.floor(age / 3_600_000);
        if (age >= limits.warning) {
          const kind = age >= limits.critical ? 'backup_critical' : 'backup_stale';
          out.push({
            problem: { kind, id: app.id, ...base, detail: `newest backup is ${hours} h old` },
            item: appItem(`newest backup is ${hours} h old`, newest.takenAt, { backup_id: newest.id }),
          });
        }
        if (!newest.verified) {
          out.push({
            problem: { kind: 'backup_unverified', id: newest.id, ...base, detail: `backup ${newest.id} not verified` },
            item: appItem(`backup ${newest.id} not verified`, newest.takenAt, { backup_id: newest.id }),
          });
        }
        const failed = (newest.offsite ?? []).find((o) => o.state === VOCABULARY.offsite.failed);
        if (failed) {
          out.push({
            problem: {
              kind: 'offsite_failed',
              id: newest.id,
              ...base,
              detail: `off-site copy to ${failed.storage} failed: ${failed.error ?? 'unknown'}`,
            },
            item: appItem(`off-site copy to ${failed.storage} failed: ${failed.error ?? 'unknown'}`, newest.takenAt, {
              backup_id: newest.id,
            }),
          });
        }
      }
      if (app.notAnswering)
        out.push({
          problem: { kind: 'app_not_answering', id: app.id, ...base, detail: 'not answering' },
          item: appItem('not answering', app.updatedAt),
        });
      if (app.maintenance)
        out.push({
          problem: { kind: 'maintenance', id: app.id, ...base, detail: 'in maintenance' },
          item: appItem('in maintenance', app.updatedAt),
        });
    }
    return out;
  }

  /** The attention summary: non-empty sections, most severe first, first 20 items each. */
  attention(now: number, nsIds: ReadonlySet<number>, keep?: (app: AppRec) => boolean): AttentionSummary {
    const byKind = new Map<ProblemKind, Record<string, unknown>[]>();
    for (const { problem, item } of this.find(now, nsIds, keep)) {
      const list = byKind.get(problem.kind) ?? [];
      list.push(item);
      byKind.set(problem.kind, list);
    }
    const sections: AttentionSection[] = (Object.keys(RULES) as ProblemKind[])
      .filter((kind) => (byKind.get(kind)?.length ?? 0) > 0)
      .map((kind) => {
        const items = byKind.get(kind) ?? [];
        return { rule: kind, ...RULES[kind], count: items.length, items: items.slice(0, SECTION_ITEMS) };
      })
      .sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
    return { sections, total: sections.reduce((sum, s) => sum + s.count, 0) };
  }

  private failureItem(
    run: RunRec,
    app: AppRec,
    ns: string,
    project: string,
    step: string | null,
    reason: string | null,
  ): Record<string, unknown> {
    return {
      id: run.id,
      run_id: run.id,
      app_id: app.id,
      app: app.name,
      namespace: ns,
      project,
      environment_type: app.envType,
      workflow: run.workflow,
      action: run.action,
      step,
      reason,
      retrying: run.retrying,
      at: this.views.time(run.updatedAt),
    };
  }
}
