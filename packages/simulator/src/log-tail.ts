/**
 * `logs.tail`: application log lines generated from the app, the source and the time (nothing is
 * stored), so any window of the last 24 hours can be read and a cursor picks up exactly where the
 * previous answer stopped. Beside them, the lines of the app's failed runs, in the log of each
 * run's workflow: the failed step's start, and an ERROR line where it failed (or where its watcher
 * reported failure), so an alert about a failed run has its error to show.
 */
import type { LogTail as LogTailAnswer } from '../../../src/api/schemas.js';
import { hash32 } from './prng.js';
import type { ParamValues } from './request-params.js';
import type { RunEngine } from './run-engine.js';
import type { AppRec, RunRec, SimState } from './sim-state.js';
import { SimError } from './sim-error.js';
import type { TimeFormatter } from './time-format.js';
import { LOG_SOURCES, VOCABULARY, type LogSource, type WorkflowName } from './vocabulary.js';

const DAY = 86_400_000;
/** One line every this often, per source. */
const INTERVAL_MS: Record<LogSource, number> = {
  main: 20_000,
  setup: 15 * 60_000,
  transfer: 2 * 3_600_000,
  restore: 6 * 3_600_000,
  backup: 3_600_000,
  upgrade: 12 * 3_600_000,
  script: 30 * 60_000,
};
const MAIN_LINES = [
  'INFO {db} werkzeug: "GET /web/webclient/version_info HTTP/1.1" 200 -',
  'INFO {db} werkzeug: "POST /web/dataset/call_kw/sale.order/read HTTP/1.1" 200 -',
  'INFO {db} server.cron: Job `Mail: Email Queue Manager` done.',
  'INFO {db} server.cron: Job `Scheduler: Auto-vacuum internal data` done.',
  'WARNING {db} server.http: Session expired for uid 7',
  'INFO {db} server.modules.loading: 142 modules loaded in 1.92s',
  'ERROR {db} server.sql_db: bad query: SELECT * FROM stock_move WHERE id IN () (syntax error)',
  'INFO {db} server.models.unlink: User #2 deleted ir.attachment records with IDs: [9921]',
];
const OTHER_LINES: Record<Exclude<LogSource, 'main'>, string[]> = {
  setup: ['setup: pulling image', 'setup: installing requirements', 'setup: done in 41 s'],
  transfer: ['transfer: syncing filestore (2.1 GB)', 'transfer: done'],
  restore: ['restore: no restore running'],
  backup: ['backup: dumping database', 'backup: archive written', 'backup: uploaded off-site'],
  upgrade: ['upgrade: no upgrade running'],
  script: ['script: nightly cleanup started', 'script: nightly cleanup done'],
};
const SINCE = /^(\d+)(s|m|h)$/;

/** The log each workflow writes to (the daemon's `notify.context.logs.sources` defaults, by action). */
const RUN_LOGS: Record<WorkflowName, LogSource> = {
  app_deploy: 'setup',
  app_update: 'setup',
  app_update_modules: 'setup',
  app_backup: 'backup',
  app_restart: 'main',
  app_maintenance: 'main',
  app_restore: 'restore',
  app_upgrade: 'upgrade',
  server_patch: 'main',
};

/** One line of a run's story in its log. */
interface RunLine {
  t: number;
  source: LogSource;
  line: string;
}

/** Default `limit` of logs.tail (reference §8); the largest accepted is the service's maximum or this, whichever is more. */
export const LOG_TAIL_DEFAULT_LIMIT = 200;

/** Generates log lines for an app and answers `logs.tail`. */
export class LogTail {
  constructor(
    private readonly times: TimeFormatter,
    private readonly state: SimState,
    private readonly engine: RunEngine,
  ) {}

  /** Answers logs.tail for an app at a time; `seed` varies the lines between simulators. The maximum `limit` is checked with the query. */
  tail(app: AppRec, query: ParamValues, now: number, seed: number): LogTailAnswer {
    const sources = parseSources(query.source as string | undefined);
    const since = parseSince(query.since as string | undefined);
    const after = query.after === undefined ? null : parseCursor(query.after as string);
    const limit = (query.limit as number | undefined) ?? LOG_TAIL_DEFAULT_LIMIT;
    if (limit < 1) throw new SimError('invalid_parameter', `parameter "limit" must be at least 1, got ${limit}`);
    const grep = (query.grep as string | undefined)?.toLowerCase();
    const from = Math.max(now - since, now - DAY);
    const lines: { t: number; s: number; line: string; source: LogSource }[] = [];
    for (const source of sources) {
      const s = LOG_SOURCES.indexOf(source);
      const interval = INTERVAL_MS[source];
      const phase = hash32(seed, app.id, s) % interval;
      // First grid point strictly after `from`.
      let t = Math.floor((from - phase) / interval) * interval + phase;
      if (t <= from) t += interval;
      for (; t <= now; t += interval) {
        if (after && (t < after.t || (t === after.t && s <= after.s))) continue;
        const templates = source === 'main' ? MAIN_LINES : OTHER_LINES[source];
        const line = (templates[hash32(seed, app.id, s, t) % templates.length] as string).replace('{db}', app.name);
        if (grep && !line.toLowerCase().includes(grep)) continue;
        lines.push({ t, s, line, source });
      }
    }
    for (const l of this.runLines(app, from, now)) {
      if (!sources.includes(l.source)) continue;
      const s = LOG_SOURCES.indexOf(l.source);
      if (after && (l.t < after.t || (l.t === after.t && s <= after.s))) continue;
      if (grep && !l.line.toLowerCase().includes(grep)) continue;
      lines.push({ t: l.t, s, line: l.line, source: l.source });
    }
    lines.sort((a, b) => a.t - b.t || a.s - b.s);
    const shown = lines.slice(Math.max(0, lines.length - limit));
    const last = shown[shown.length - 1];
    const cursor = last
      ? encodeCursor(last.t, last.s)
      : after
        ? encodeCursor(after.t, after.s)
        : encodeCursor(now, LOG_SOURCES.length);
    return {
      items: shown.map((l) => ({ time: this.times.write(l.t), line: l.line, source: l.source })),
      cursor,
      truncated: lines.length > shown.length,
    };
  }

  /**
   * The lines of the app's failed runs logged in (from, now]: the failed step's start, then an
   * ERROR line at its end with its reason; for a run whose watcher reported failure, an ERROR line
   * where it did. Runs are read newest first and no further back than a day before `from`.
   */
  private runLines(app: AppRec, from: number, now: number): RunLine[] {
    const out: RunLine[] = [];
    for (const run of this.state.runIndex.byApp(app.id)) {
      if (run.createdAt < from - DAY) break;
      const lines = [...this.pastFailuresOf(run), ...(run.state === VOCABULARY.run.error ? this.failureOf(run) : [])];
      for (const l of lines) if (l.t > from && l.t <= now) out.push(l);
    }
    return out;
  }

  /** The lines of the earlier attempts of a run that failed and was retried since. */
  private pastFailuresOf(run: RunRec): RunLine[] {
    const source = RUN_LOGS[run.workflow];
    const tag = `run ${run.id} (${run.action})`;
    return (run.pastFailures ?? []).flatMap((f): RunLine[] => {
      if (f.step === null) return [{ t: f.at, source, line: `${source}: ERROR ${tag} ${f.reason}` }];
      const failed = { t: f.at, source, line: `${source}: ERROR ${tag} step ${f.step} failed: ${f.reason}` };
      return f.startedAt !== null && f.startedAt < f.at
        ? [{ t: f.startedAt, source, line: `${source}: ${tag} step ${f.step} started` }, failed]
        : [failed];
    });
  }

  private failureOf(run: RunRec): RunLine[] {
    const source = RUN_LOGS[run.workflow];
    const tag = `run ${run.id} (${run.action})`;
    const watcher = this.engine.watcherOf(run);
    if (watcher && watcher.state !== 'waiting' && watcher.state !== 'completed') {
      return [
        {
          t: run.updatedAt,
          source,
          line: `${source}: ERROR ${tag} watcher ${watcher.state}: ${watcher.reason ?? 'no reason given'}`,
        },
      ];
    }
    const step = this.engine.stepsOf(run).find((st) => st.state === VOCABULARY.step.error);
    if (!step) return [];
    const end = step.updatedAt ?? run.updatedAt;
    const lines: RunLine[] = [
      { t: end, source, line: `${source}: ERROR ${tag} step ${step.name} failed: ${step.reason ?? 'failed'}` },
    ];
    if (step.startedAt !== null && step.startedAt < end) {
      lines.unshift({ t: step.startedAt, source, line: `${source}: ${tag} step ${step.name} started` });
    }
    return lines;
  }
}

function parseSources(raw: string | undefined): LogSource[] {
  if (raw === undefined) return ['main'];
  if (raw === 'all') return [...LOG_SOURCES];
  const names = raw.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!(LOG_SOURCES as readonly string[]).includes(name))
      throw new SimError(
        'invalid_parameter',
        `parameter "source" takes ${LOG_SOURCES.join(', ')} or all, comma-separated; got "${name}"`,
      );
  }
  return [...new Set(names)] as LogSource[];
}

function parseSince(raw: string | undefined): number {
  if (raw === undefined) return 3_600_000;
  const m = SINCE.exec(raw);
  const ms = m ? Number(m[1]) * (m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 3_600_000) : NaN;
  if (!(ms > 0) || ms > DAY)
    throw new SimError('invalid_parameter', `parameter "since" must be like 30s, 15m or 1h, at most 24h; got "${raw}"`);
  return ms;
}

function encodeCursor(t: number, s: number): string {
  return Buffer.from(`v1:${t}:${s}`).toString('base64url');
}

function parseCursor(raw: string): { t: number; s: number } {
  const m = /^v1:(\d+):(\d+)$/.exec(Buffer.from(raw, 'base64url').toString());
  if (!m) throw new SimError('invalid_parameter', 'parameter "after" is not a cursor this service gave');
  return { t: Number(m[1]), s: Number(m[2]) };
}
