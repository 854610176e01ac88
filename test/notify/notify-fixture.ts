/**
 * A notification pipeline on a real state (a SQLite file in a temp dir, or a PostgreSQL database
 * when the test says so), fed by the real alert lifecycle,
 * delivering to real channels (the Slack stand-in, the SMTP sink) on a ManualClock.
 */
import { commitFindings, type CycleStage } from '../../src/alerts/commit-findings.js';
import type { JobKey } from '../../src/alerts/job-key.js';
import { AlertStore } from '../../src/alerts/alert-store.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import type { Labels, Severity } from '../../src/lib/alert-vocabulary.js';
import type { CheckName } from '../../src/detectors/registry.js';
import type { Finding } from '../../src/detectors/finding.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { buildChannels, closeChannels } from '../../src/notify/build-channels.js';
import type { Channel } from '../../src/notify/channels/channel.js';
import { channelConfigSchema } from '../../src/notify/channels/registry.js';
import { createNotifier, type Notifier } from '../../src/notify/notifier.js';
import type { AlertDefaults, NotifySettings } from '../../src/notify/notify-settings.js';
import type { OutboxPass } from '../../src/notify/outbox.js';
import { remediationDigest } from '../../src/remediation/remediation-digest.js';
import type { Metrics } from '../../src/lib/metrics.js';
import type { Store } from '../../src/state/store.js';
import { SQLITE_BACKEND, type StateBackend, type TestState } from '../helpers/state-backends.js';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** Monday 2 November 2026, 12:00 UTC. */
export const T0 = Date.UTC(2026, 10, 2, 12, 0, 0);

/** Notify settings with the config's defaults, overridable per test. */
export function notifySettings(over: Partial<NotifySettings> = {}): NotifySettings {
  return {
    routes: [],
    group_by: ['check', 'environment_type'],
    max_items_per_message: 10,
    mute_windows: [],
    delivery: {
      max_age: 24 * HOUR,
      initial_backoff: 10 * SECOND,
      max_backoff: 10 * MINUTE,
      timeout: 5 * SECOND,
      interval: 5 * SECOND,
    },
    digest: { enabled: false, at: '09:00', time_zone: 'UTC', channels: [] },
    inhibit: { api_unreadable: true, bad_servers: true, app_maintenance: true, app_down: true },
    ...over,
  };
}

/** A finding of an app problem; `id` makes the fingerprint and summary. */
export function finding(id: string, labels: Partial<Labels> = {}, severity: Severity = 'warning'): Finding {
  const check = (labels.check ?? 'failed_runs') as CheckName;
  return {
    fingerprint: `${check}/${id}`,
    check,
    severity,
    summary: `Problem ${id}`,
    details: {},
    labels: { environment_type: 'production', app: id, ...labels, check },
    facts: [],
  };
}

/** Captured JSON log lines. */
export class LogCapture {
  readonly lines: string[] = [];
  readonly logger: Logger;

  constructor() {
    const lines = this.lines;
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    this.logger = createLogger({ format: 'json', level: 'debug', destination: stream });
  }

  text(): string {
    return this.lines.join('');
  }
}

/** Options of {@link Harness.open}. */
export interface HarnessOptions {
  /** Channel configs as written in YAML (`webhook_url` a plain string). */
  channels: Record<string, unknown>[];
  /** Channels built by the test itself (a kind of its own), by name, beside those of `channels`. */
  builtChannels?: Record<string, Channel>;
  notify?: Partial<NotifySettings>;
  alerts?: Partial<AlertDefaults>;
  clock?: ManualClock;
  /** The state's backend; SQLite by default. */
  backend?: StateBackend;
  /** Reuse a directory (a restart; SQLite: its state.db). */
  dir?: string;
  /** Reuse a state (a restart). */
  state?: TestState;
  metrics?: Metrics;
}

/** One pipeline over one state file. */
export class Harness {
  private constructor(
    readonly dir: string,
    readonly state: TestState,
    readonly store: Store,
    readonly clock: ManualClock,
    readonly notifier: Notifier,
    readonly channels: Map<string, Channel>,
    readonly log: LogCapture,
    private readonly options: HarnessOptions,
  ) {}

  static open(options: HarnessOptions): Harness {
    const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'dw-notify-'));
    const clock = options.clock ?? new ManualClock(T0);
    const log = new LogCapture();
    const state = options.state ?? (options.backend ?? SQLITE_BACKEND).fresh(dir);
    // Opened as the daemon would but with no logger: the store logs only the migrations it
    // applies, which no test of the pipeline reads, and a store opened that way on PostgreSQL is a
    // copy of the run's migrated template (milliseconds) instead of a fresh migration (a second or
    // more of round trips to the server at each open: 14 s of outbox.test.ts's 28 s).
    const store = state.open();
    const configs = options.channels.map((c) => channelConfigSchema.parse(c));
    const settings = notifySettings(options.notify);
    const channels = buildChannels(configs, {
      logger: log.logger,
      clock,
      store,
      maxItemsPerMessage: settings.max_items_per_message,
    });
    for (const [name, c] of Object.entries(options.builtChannels ?? {})) channels.set(name, c);
    const notifier = createNotifier({
      store,
      notify: settings,
      alerts: { repeat_interval: 4 * HOUR, send_resolved: true, ...options.alerts },
      channels,
      clock,
      logger: log.logger,
      random: () => 1,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      // As the runtime gives it.
      remediationSince: (since) => remediationDigest(store, since),
    });
    return new Harness(dir, state, store, clock, notifier, channels, log, options);
  }

  /** Same directory, new process-worth of objects (the old ones closed first). */
  async restart(): Promise<Harness> {
    await this.close({ keepDir: true });
    return Harness.open({ ...this.options, dir: this.dir, state: this.state, clock: this.clock });
  }

  /** One job's complete snapshot through the lifecycle and into the outbox, in one transaction. */
  cycle(job: JobKey, findings: readonly Finding[]): OutboxPass {
    const now = this.clock.now();
    let pass: OutboxPass | undefined;
    // The daemon's sink, with the outbox as its stage: the pass it made is what the test reads.
    const outbox: CycleStage = { take: (c) => (pass = this.notifier.enqueue(c.events, c.now)) };
    const options = { forCycles: 1, repeatIntervalMs: this.notifier.lifecycleRepeatIntervalMs };
    commitFindings(new AlertStore(this.store), { job, now, write: () => [{ job, findings, options }] }, [outbox]);
    return pass ?? this.notifier.enqueue([], now);
  }

  /** Outbox rows for assertions, oldest first. */
  rows(where = '1 = 1'): {
    id: number;
    channel: string;
    kind: string;
    fingerprint: string | null;
    status: string;
    decision: string;
    attempts: number;
    last_error: string | null;
    source: string;
  }[] {
    return this.store.db
      .prepare(
        `SELECT id, channel, kind, fingerprint, status, decision, attempts, last_error, source FROM outbox WHERE ${where} ORDER BY id`,
      )
      .all() as never;
  }

  async close(options: { keepDir?: boolean } = {}): Promise<void> {
    await this.notifier.stop();
    await closeChannels(this.channels.values());
    this.store.close();
    if (options.keepDir) return;
    this.state.cleanup();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Slack channel config pointing at a receiver. */
export function slackTo(name: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, type: 'slack', webhook_url: url, timeout: 60_000, ...extra };
}

/** The whole text of a Slack-like payload, for "contains" assertions. */
export function payloadText(payload: unknown): string {
  return JSON.stringify(payload);
}
