/**
 * How deploy-watchdog asks V8 to size its heap: for a daemon that reads a large estate in bursts
 * and holds little between them, not for V8's default (throughput on a big machine).
 *
 * Left to itself on a machine with a few GB, V8 lets the old generation grow to about four times
 * what is live before it collects, and the young generation to 32 MB: a 10,000-app cycle peaked at
 * 250-280 MB of RSS for 25 MB that was live. Under a container memory limit it goes the other way
 * (V8 sizes its heap from the limit: 1 MB semi-spaces in 512 MB) and collects so often that the
 * cycle takes twice the CPU. Two settings give the same heap whatever the host:
 * - a fixed young generation ({@link DAEMON_NODE_OPTIONS}), which can only be given on node's
 *   command line: the Dockerfile, the systemd unit and the benchmark start node with it;
 * - the old generation collected once it has grown by {@link HEAP_GROWING_PERCENT} of what was
 *   live after the last full collection ({@link applyHeapGrowth}), which V8 reads on every
 *   collection and so can be set by the process itself: `bin.ts` does it for every command.
 * Measured in `docs/benchmarks.md` ("Heap settings").
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Options node is started with for the daemon: 4 MB semi-spaces (an 8 MB young generation),
 * enough that a page of list items is parsed, checked and dropped before it is ever promoted.
 * `test/cli/heap-settings.test.ts` checks the Dockerfile and the README's unit carry them.
 */
export const DAEMON_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=4'];

/** How much the old generation may grow past what was live before V8 collects it (left to V8: up to 300%). */
export const HEAP_GROWING_PERCENT = 50;

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
