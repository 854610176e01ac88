#!/usr/bin/env node
/** The executable behind `npx deploy-watchdog`: wires the real process into {@link main}. */
import { EXIT } from './command.js';
import { exitDeadline } from './exit-deadline.js';
import { Hangups } from './hangups.js';
import { applyHeapGrowth } from './memory-settings.js';
import { main } from './main.js';
import { errorText } from '../lib/error-text.js';

// Before anything else: a SIGHUP while `run` is still loading or starting would otherwise kill it
// (the signal's default action); this keeps it as a reload for when the daemon is up. Only `run`
// reloads on SIGHUP; the other commands keep the default.
const hangups = process.argv[2] === 'run' ? new Hangups(process) : undefined;

// A heap sized for a daemon that reads in bursts, whatever the host's memory (memory-settings.ts).
applyHeapGrowth();

const controller = new AbortController();
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    signals += 1;
    // A second signal means "now": the first one already asked for a clean stop.
    if (signals > 1) process.exit(130);
    controller.abort(new Error(`received ${sig}`));
  });
}

// A reader that goes away (`deploy-watchdog alerts | head`) is its choice, not a failure: what
// was left to print is dropped, and the command ends with its own status. Without a listener, the
// write's EPIPE is an unhandled 'error' event, and node prints its stack.
let outputClosed = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  outputClosed = true;
  controller.abort(new Error('standard output was closed'));
});

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
  exitBy: exitDeadline,
  ...(hangups ? { hangups } : {}),
})
  .then((code) => {
    // `run` logs to standard output: without it, it stops as a failure, so a supervisor starts it again.
    if (outputClosed && process.argv[2] === 'run') {
      process.stderr.write('deploy-watchdog: standard output was closed: stopped\n');
      code = EXIT.incomplete;
    }
    process.exitCode = code;
  })
  .catch((err: unknown) => {
    process.stderr.write(`deploy-watchdog: ${errorText(err)}\n`);
    process.exitCode = EXIT.incomplete;
  });
