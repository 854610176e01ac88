/**
 * `deploy-watchdog demo`, end to end in one process: a seeded simulator healed to all green, a
 * Slack stand-in and an SMTP sink that print what they receive, the real daemon built from a demo
 * config in a temp dir, and the scenario that makes problems happen and clear. Stops cleanly at
 * the end or on Ctrl-C: daemon (flushing what is due), peers, simulator, temp dir.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../../../src/lib/logger.js';
import { parseConfig, type Config } from '../../../../src/config/load-config.js';
import { OVERRUNS_COMPONENT } from '../../../../src/app/job-overruns.js';
import { systemClock, type Clock } from '../../../../src/lib/clock.js';
import { startSmtpSink, type SmtpSink } from './peers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './peers/webhook-receiver.js';
import { startSimulator, type RunningSimulator } from '../index.js';
import { castDemo } from './demo-cast.js';
import { DEMO_ENV, DEMO_NAMES, demoConfigYaml } from './demo-config.js';
import { DemoPrinter } from './demo-printer.js';
import { DemoTally } from './demo-tally.js';
import { healEstate } from './heal-estate.js';
import { readEmail } from './read-email.js';
import { slackPayloadReader } from './read-slack-payload.js';
import { buildScenario } from './scenario.js';
import { ScenarioRunner, type ScenarioOutcome } from './scenario-runner.js';
import { startDemoDaemon, type DemoDaemon } from './demo-daemon.js';

/** What a demo run is told. */
export interface DemoOptions {
  durationMs: number;
  apps: number;
  seed: number;
  /** Keep the temp dir (config, state file) instead of removing it. */
  keep: boolean;
  /** One line per message instead of the whole message. */
  quiet: boolean;
}

/** Where the demo writes and what stops it. */
export interface DemoIo {
  stdout: Writable;
  stderr: Writable;
  signal: AbortSignal;
  clock?: Clock;
}

/** What a demo run did, for the command's exit code and for tests. */
export interface DemoResult {
  tally: DemoTally;
  ending: ScenarioOutcome['ending'];
  /** The temp dir (gone unless `keep`). */
  dir: string;
}

/** How long the daemon gets to deliver what is due when it stops. */
const STOP_DEADLINE_MS = 5_000;

/** The labels messages are printed with. */
const LABELS = { slack: '[slack #ops]', email: `[email ${DEMO_NAMES.mailTo}]` } as const;

/** Every job's period (s) for a duration: about twenty looks per run, 1 to 5 s, a divisor of 60. */
export function jobPeriodSeconds(durationMs: number): number {
  const wanted = Math.floor(durationMs / 20_000);
  return [5, 4, 3, 2, 1].find((s) => s <= wanted) ?? 1;
}

/** Runs the demo; resolves when it is over and everything it started is stopped. */
export async function runDemo(options: DemoOptions, io: DemoIo): Promise<DemoResult> {
  const clock = io.clock ?? systemClock;
  const startedAt = clock.now();
  const printer = new DemoPrinter(io.stdout, LABELS, {
    quiet: options.quiet,
    startedAt: () => startedAt,
    now: () => clock.now(),
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-watchdog-demo-'));
  const cleanups: (() => Promise<void> | void)[] = [];
  let daemon: DemoDaemon | undefined;
  try {
    // The estate first: the cast and the story decide what the tally listens for.
    const sim: RunningSimulator = await startSimulator({ apps: options.apps, seed: options.seed, clock });
    cleanups.push(() => sim.close());
    const heal = healEstate(sim.control);
    const cast = castDemo(sim.control);
    const scenario = buildScenario(cast, DEMO_NAMES.retryPolicy);
    const tally = new DemoTally(scenario.problems);

    // Printing starts with the show; anything delivered after the daemon stopped is not printed.
    let live = false;
    const readSlack = slackPayloadReader();
    const webhook: WebhookReceiver = await startWebhookReceiver({
      onPayload(payload) {
        const reading = readSlack(payload);
        const before = tally.complete();
        tally.slack(reading);
        if (!live) return;
        printer.message(LABELS.slack, reading.lines);
        if (!before && tally.complete()) printer.note('✔ every staged problem has been announced and cleared');
      },
    });
    cleanups.push(() => webhook.close());
    const smtp: SmtpSink = await startSmtpSink({
      onMessage(message) {
        const reading = readEmail(message);
        tally.email(reading);
        if (live) printer.message(LABELS.email, reading.brief);
      },
    });
    cleanups.push(() => smtp.close());

    const jobEverySeconds = jobPeriodSeconds(options.durationMs);
    const configPath = path.join(dir, 'deploy-watchdog.yaml');
    const text = demoConfigYaml({
      baseUrl: sim.baseUrl,
      smtp: { host: smtp.host, port: smtp.port },
      jobEverySeconds,
      retryEnvironment: cast.runApp.environmentType,
    });
    fs.writeFileSync(configPath, text, { mode: 0o600 });
    const env = { [DEMO_ENV.token]: sim.adminToken, [DEMO_ENV.webhook]: webhook.url };
    const config: Config = parseConfig(text, env, configPath, { baseDir: dir });

    printer.banner({
      apps: options.apps,
      seed: options.seed,
      durationMs: options.durationMs,
      simulatorUrl: sim.baseUrl,
      slackAddress: new URL(webhook.url).host,
      smtpAddress: `${smtp.host}:${smtp.port}`,
      configPath,
      keep: options.keep,
      jobEverySeconds,
      healed: heal.fixed.length + heal.restartedServers + heal.startedApps,
      unhealed: heal.remaining.map((p) => `${p.kind} ${p.app}: ${p.detail}`),
    });
    live = true;

    const logger = demoLogger(io.stderr);
    daemon = await startDemoDaemon(config, { clock, logger, configFile: configPath });
    printer.note(
      `▶ the watchdog is running: ${config.notify.channels.length} channels, remediation on (policy ${DEMO_NAMES.retryPolicy})`,
    );

    const runner = new ScenarioRunner(scenario, sim.control, clock, {
      onStep: (step) => {
        tally.step(step);
        printer.step(step);
      },
      onChange: (request) => {
        tally.change(request);
        printer.note(`🛠  the service received ${request.fn} (${request.method} ${request.path}) → ${request.status}`);
      },
      onStepError: (step, err) => printer.note(`✗ could not stage "${step.says}": ${(err as Error).message}`),
    });
    const outcome = await runner.run({
      durationMs: options.durationMs,
      settled: () => tally.complete(),
      settleMs: Math.max(10_000, options.durationMs / 4),
      signal: io.signal,
    });
    if (outcome.ending === 'aborted') printer.note('■ stopping (interrupted)');
    else printer.note('■ stopping: the daemon delivers what is still due, then everything closes');

    await daemon.stop(STOP_DEADLINE_MS);
    daemon = undefined;
    live = false;
    printer.summary(
      tally,
      outcome.ending === 'aborted' ? 'interrupted' : outcome.ending === 'completed' ? 'every problem told' : 'time up',
    );
    if (options.keep) io.stdout.write(`kept ${dir} (the config and the state file)\n`);
    return { tally, ending: outcome.ending, dir };
  } finally {
    if (daemon) await daemon.stop(STOP_DEADLINE_MS).catch(() => undefined);
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
    if (!options.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The daemon's own logs: warnings and worse only, on stderr, so the show on stdout reads. But not
 * the job overruns: the demo's jobs beat every few seconds so that problems come and go within a
 * minute, and a slow (or busy) laptop overruns that beat; a user should not be warned about the
 * demo's own schedule. (The metric still counts them, and an error of that component is written.)
 */
export function demoLogger(stderr: Writable): Logger {
  const tty = (stderr as Writable & { isTTY?: boolean }).isTTY === true;
  return createLogger({
    level: 'warn',
    format: tty ? 'pretty' : 'json',
    destination: stderr,
    componentLevels: { [OVERRUNS_COMPONENT]: 'error' },
  });
}
