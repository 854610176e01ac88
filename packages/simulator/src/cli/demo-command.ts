import { parseDuration } from '../../../../src/config/duration.js';
import type { DemoOptions } from '../demo/run-demo.js';
import { defineCommand, parseCommandArgs } from '../../../../src/cli/cli-helpers.js';
import { EXIT, UsageError } from '../../../../src/cli/command.js';

const usage = `usage: deploy-watchdog demo [--duration 60s] [--apps 12] [--seed 1] [--keep] [--quiet]

Runs the watchdog against local stand-ins, all in this process: a simulated Deployment
Management Service, a Slack webhook stand-in and an SMTP sink. Over the duration a failed update
(retried by policy), a certificate near expiry, a stale backup, a failed off-site upload and a
failing outside check happen and clear again; every Slack message and email is printed as it is
delivered, then a summary. Nothing leaves this machine.

  --duration D   how long the story takes: 60s (default), 20s, 2m, 1m30s or plain seconds (5s to 1h)
  --apps N       apps in the simulated estate (default 12; 1 to 1000)
  --seed N       seed of the estate (default 1): the same seed gives the same apps
  --keep         keep the temp dir (config and state file) instead of removing it
  --quiet        one line per message instead of the whole message

Ctrl-C stops it cleanly.`;

const LIMITS = { minDurationMs: 5_000, maxDurationMs: 3_600_000, maxApps: 1000 } as const;

/** `--duration`: a duration with a unit, or plain seconds. */
function durationOption(text: string): number {
  const ms = /^\d+$/.test(text.trim()) ? Number(text) * 1000 : parseDuration(text);
  if (ms < LIMITS.minDurationMs || ms > LIMITS.maxDurationMs) {
    throw new UsageError(`--duration must be between 5s and 1h, got ${JSON.stringify(text)}`);
  }
  return ms;
}

/** An integer option within bounds. */
function integerOption(name: string, text: string, min: number, max: number): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** The demo's options on the command line. */
const DEMO_OPTIONS = {
  duration: { type: 'string' },
  apps: { type: 'string' },
  seed: { type: 'string' },
  keep: { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

/** Reads the command line into demo options; throws UsageError naming what was wrong. */
export function parseDemoArgs(argv: string[]): DemoOptions {
  return demoOptionsOf(parseCommandArgs(argv, DEMO_OPTIONS));
}

/** The demo options of a parsed command line; throws UsageError naming a bad value. */
function demoOptionsOf({ values }: ReturnType<typeof parseCommandArgs<typeof DEMO_OPTIONS>>): DemoOptions {
  let durationMs = 60_000;
  if (values.duration !== undefined) {
    try {
      durationMs = durationOption(values.duration);
    } catch (err) {
      throw err instanceof UsageError ? err : new UsageError(`--duration: ${(err as Error).message}`);
    }
  }
  return {
    durationMs,
    apps: values.apps === undefined ? 12 : integerOption('apps', values.apps, 1, LIMITS.maxApps),
    seed: values.seed === undefined ? 1 : integerOption('seed', values.seed, 0, 2 ** 31 - 1),
    keep: values.keep === true,
    quiet: values.quiet === true,
  };
}

/**
 * The package whose absence made an import fail, when that is why it failed: the demo's stand-ins
 * need development dependencies (smtp-server, mailparser) that a production install leaves out.
 */
function missingPackage(err: unknown): string | undefined {
  if ((err as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return /Cannot find package '([^']+)'/.exec((err as Error).message)?.[1];
}

/** `deploy-watchdog demo`. */
const demo = defineCommand({
  usage,
  options: DEMO_OPTIONS,
  configFile: false,
  parse: demoOptionsOf,
  async run(options, io) {
    // Loaded here, not at the top: `run` and `check` never load the stand-ins, and a production
    // install (`npm ci --omit=dev`, the container image) has the daemon without them.
    let demoModule: typeof import('../demo/run-demo.js');
    try {
      demoModule = await import('../demo/run-demo.js');
    } catch (err) {
      const missing = missingPackage(err);
      if (missing === undefined) throw err;
      io.stderr.write(
        `the demo needs the development dependencies, and ${missing} is not installed: run it in a clone of the project after \`npm ci\` (a production install, \`npm ci --omit=dev\` or the container image, leaves them out)\n`,
      );
      return EXIT.usage;
    }
    const result = await demoModule.runDemo(options, { stdout: io.stdout, stderr: io.stderr, signal: io.signal });
    // Ctrl-C is a normal way to end a demo; an uninterrupted demo that left a problem untold did
    // not show what it promised.
    if (result.ending === 'aborted' || result.tally.complete()) return EXIT.ok;
    io.stderr.write('the demo ended before every staged problem was announced and cleared; see the summary\n');
    return EXIT.incomplete;
  },
});

export default demo;
