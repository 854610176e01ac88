/**
 * The on-call channels driven end to end, shared by their tests: the daemon reads the simulator on
 * a ManualClock and sends to one channel, the service's protocol-level fake (test/helpers). A
 * certificate about to expire on an app with a hostile name is the alert: it fires, is
 * acknowledged here (as the CLI would), and ends when the certificate is renewed. Secrets are
 * looked for, by place, in every file of the state and in the log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { acknowledge } from '../../src/alerts/acknowledge.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { captureLogger, engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';

/**
 * An app name that tries every trick of the four targets' markdown: emphasis, a masked link, a
 * mention of everyone, a user mention, a list, a heading, a code span, a reordering character.
 */
export const HOSTILE_APP =
  '1. *shop* @everyone <@123456789012345678> [click](https://evil.example) # _x_ `rm` \u202Egnp';

/** One test's world. */
/** What a test may set beyond the channel: the server section, the jobs section, one more channel. */
interface OpenOptions {
  server?: string;
  jobs?: string;
  also?: string;
}

export class OnCallWorld {
  readonly logs = captureLogger('debug');
  wd: Watchdog | undefined;

  private constructor(
    readonly sim: RunningSimulator,
    readonly clock: ManualClock,
    readonly tmp: ReturnType<typeof tempDir>,
  ) {}

  static async start(): Promise<OnCallWorld> {
    const { sim, clock } = await manualSim({ apps: 30 });
    // Only the certificate a test expires fires: the group holds one alert.
    for (const [id, url] of sim.control.state.urls)
      if (url.sslExpiresAt !== null) sim.control.checks.certificates.renew(id);
    return new OnCallWorld(sim, clock, tempDir());
  }

  /**
   * Opens the daemon with `channel` (YAML, one list item's fields) as its only channel, sent the
   * certificates alerts only (the seed has others in the urls job: they go to the log).
   */
  open(
    channel: string,
    env: Record<string, string>,
    route = '{ match: { check: certificates }, channels: [oncall] }',
    options: OpenOptions = {},
  ): Watchdog {
    this.wd = openWatchdog(this.config(channel, env, route, options), this.clock, { logger: this.logs.logger });
    return this.wd;
  }

  /** The config {@link open} opens the daemon with (relative files in it are taken from the world's directory). */
  config(
    channel: string,
    env: Record<string, string>,
    route = '{ match: { check: certificates }, channels: [oncall] }',
    options: OpenOptions = {},
  ) {
    const notify = `notify:
  channels:
    - ${channel.trim().split('\n').join('\n      ')}${options.also ? `\n    - ${options.also}` : ''}
    - { name: console, type: log }
  routes: [${route}, { channels: [console] }]
  delivery: { initial_backoff: 10s, max_backoff: 1h }`;
    const server = options.server ?? '{ listen: "off", console: { public_url: "https://watchdog.example.com" } }';
    const jobs = options.jobs ?? 'jobs: { jitter: 0s }';
    return engineConfig(this.sim, this.tmp.dir, jobs, this.sim.adminToken, notify, server, env);
  }

  /** A production app with a URL, renamed to {@link HOSTILE_APP}; its URL's id. */
  hostileApp(): { name: string; urlId: number } {
    const app = [...this.sim.control.state.apps.values()].find(
      (a) => a.envType === 'production' && a.deployedAt !== null && a.urlIds.length > 0,
    );
    expect(app).toBeDefined();
    this.sim.control.renameApp(app!.id, { name: HOSTILE_APP });
    return { name: HOSTILE_APP, urlId: app!.urlIds[0]! };
  }

  /** Expires the certificate, runs the urls job and delivers: the alert fires. Its fingerprint. */
  async fire(urlId: number): Promise<string> {
    this.sim.control.checks.certificates.expire(urlId, { inDays: 2 });
    expect((await this.wd!.runOnce(['urls'])).complete).toBe(true);
    await this.wd!.deliverDue();
    const row = this.wd!.store.db.prepare(
      `SELECT fingerprint FROM alerts WHERE status = 'firing' AND check_name = 'certificates'`,
    ).get() as { fingerprint: string } | undefined;
    expect(row).toBeDefined();
    return row!.fingerprint;
  }

  /** Acknowledges the alert here (as `deploy-watchdog ack` would) and delivers. */
  async acknowledge(fingerprint: string, comment = 'rolling back *now* @here'): Promise<void> {
    this.clock.advance(MINUTE);
    expect(
      acknowledge(this.wd!.store, { fingerprint, by: 'alice', via: 'cli', comment, now: this.clock.now() }).outcome,
    ).toBe('acknowledged');
    await this.wd!.deliverDue();
  }

  /** Renews the certificate, runs the urls job and delivers: the alert is over. */
  async resolve(urlId: number): Promise<void> {
    this.clock.advance(MINUTE);
    this.sim.control.checks.certificates.renew(urlId);
    expect((await this.wd!.runOnce(['urls'])).complete).toBe(true);
    await this.wd!.deliverDue();
  }

  /** The statuses of the channel's outbox rows. */
  statuses(): string[] {
    return (
      this.wd!.store.db.prepare(`SELECT status FROM outbox WHERE channel = 'oncall'`).all() as { status: string }[]
    ).map((r) => r.status);
  }

  /** The last error the outbox kept for the channel, if any. */
  lastError(): string | null {
    const row = this.wd!.store.db.prepare(
      `SELECT last_error FROM outbox WHERE channel = 'oncall' AND last_error IS NOT NULL ORDER BY id DESC`,
    ).get() as { last_error: string } | undefined;
    return row?.last_error ?? null;
  }

  /** Where a secret shows, by place (every file of the state, the log); named only, so a failure prints none. */
  leaks(secrets: readonly string[]): string[] {
    const places: [string, string][] = fs
      .readdirSync(this.tmp.dir)
      .map((f) => [f, fs.readFileSync(path.join(this.tmp.dir, f)).toString('latin1')]);
    places.push(['log', this.logs.text()]);
    return places.flatMap(([place, text]) =>
      secrets.flatMap((s, i) => (text.includes(s) ? [`${place}: secret ${i}`] : [])),
    );
  }

  async close(): Promise<void> {
    await this.wd?.stop(1_000);
    this.wd = undefined;
    await this.sim.close();
    this.tmp.cleanup();
  }
}
