/**
 * How the deploy-watchdog process uses memory: for a daemon that reads a large estate in bursts
 * and holds little between them, not for the defaults of V8 and glibc (throughput on a big machine).
 *
 * Left to themselves on a machine with a few GB, V8 lets the old generation grow to about four
 * times what is live before it collects and the young generation to 32 MB, and glibc serves
 * freed-and-reused buffers of a few hundred kB from a heap that fragments: a 10,000-app cycle
 * peaked at 250-280 MB of RSS for 25 MB that was live. Under a container memory limit V8 goes the
 * other way (it sizes its heap from the limit: 1 MB semi-spaces in 512 MB) and collects so often
 * that the cycle takes twice the CPU. Three settings give the same, smaller process on any host:
 * - a fixed young generation, and WebAssembly kept on its baseline compiler
 *   ({@link DAEMON_NODE_OPTIONS}), which can only be given on node's command line;
 * - glibc's mmap threshold fixed ({@link DAEMON_ENV}), read from the environment when the process
 *   starts: buffers from 128 kB up (a list page's body is 0.3-1 MB) are mapped and unmapped on
 *   their own instead of fragmenting the heap;
 * - the old generation collected once it has grown by {@link HEAP_GROWING_PERCENT} of what was
 *   live after the last full collection ({@link applyHeapGrowth}), which V8 reads at every
 *   collection and so the process sets itself: `bin.ts` does it for every command.
 * The first two are in the Dockerfile, the README's systemd unit, the soak's npm script and the
 * benchmark (`test/cli/memory-settings.test.ts` keeps them in step). Measured in
 * `docs/benchmarks.md` ("Memory settings").
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Options node is started with: 4 MB semi-spaces, an 8 MB young generation whatever the host; and
 * the old generation's growth on the command line, where V8 takes it from the start (measured on
 * 2026-11-24 at 10,000 apps: peaks of 142.6-149.7 MB with it, 150.5-155.5 MB with only the
 * setting made at run time; docs/benchmarks.md). 30% since the backups walk stopped parsing the
 * records it drops (2026-11-28, quiet, two runs each): a peak of 133.6-134.2 MB against
 * 143.2-143.6 MB at 60%, for the same CPU within the runs' noise (3.3-3.5 s against 2.9-3.7 s a
 * steady cycle). 2 MB semi-spaces took the peak to 129 MB but the cycle's CPU up by 40%.
 * Then WebAssembly kept on its baseline compiler (Liftoff): undici parses HTTP with a WebAssembly
 * module, and once it ran hot V8 compiled it again with TurboFan on a helper thread, ~35 MB of
 * compiler memory for half a second of the first cycle. Both flags are needed (the first alone
 * leaves the dynamic tier-up on, the second alone compiles every function with TurboFan at once);
 * `--liftoff-only` would also forbid TurboFan where Liftoff cannot compile a function. Measured
 * 2026-11-30: the first cycle's peak ~120 MB against ~129 MB, for the same CPU.
 */
export const DAEMON_NODE_OPTIONS: readonly string[] =
  '--max-semi-space-size=4 --heap-growing-percent=30 --no-wasm-tier-up --no-wasm-dynamic-tiering'.split(' ');

/**
 * Environment the daemon is started with: glibc's `M_MMAP_THRESHOLD` fixed at 128 kB (glibc
 * otherwise raises it up to 32 MB as large blocks are freed, and then serves them from its heap).
 * No effect on other C libraries.
 */
export const DAEMON_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * How much the old generation may grow past what was live before V8 collects it (left to V8: up
 * to 300%). At 10,000 apps, 30% keeps the peak ~9 MB lower than 60% for no CPU the bench could
 * tell apart (see {@link DAEMON_NODE_OPTIONS}); before the answer path and the walks made less
 * garbage, 50% cost ~20% more CPU than 100%. Measured in docs/benchmarks.md.
 */
export const HEAP_GROWING_PERCENT = 30;

const GROWING_FLAG = '--heap-growing-percent';

/**
 * Sets V8's old-generation growth to {@link HEAP_GROWING_PERCENT}, unless node was started with
 * its own `--heap-growing-percent` (an operator's choice wins). Returns the percent in force, or
 * null when the operator's is.
 */
export function applyHeapGrowth(execArgv: readonly string[] = process.execArgv): number | null {
  if (execArgv.some((arg) => arg.startsWith(GROWING_FLAG) || arg.startsWith('--heap_growing_percent'))) return null;
  setFlagsFromString(`${GROWING_FLAG}=${HEAP_GROWING_PERCENT}`);
  return HEAP_GROWING_PERCENT;
}
