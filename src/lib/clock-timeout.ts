/**
 * "Abort after a time on the clock", written once: the flush's shutdown deadline, a cycle's read
 * ceiling, the wait for alerts' context, the time limits of the heartbeat and of a channel's send,
 * the stop deadlines of the background loops and of the daemon. On the injected Clock, so a
 * test's ManualClock drives it.
 */
import type { Clock } from './clock.js';

/**
 * A signal that aborts with `reason()` once `ms` have passed on `clock` (undefined: never), or
 * with `parent`'s reason when it aborts first; `dispose` ends the timer and lets go of the parent
 * once the work is over (the signal keeps its state).
 */
export function clockTimeout(
  clock: Clock,
  ms: number | undefined,
  reason: () => unknown,
  parent?: AbortSignal,
): { signal: AbortSignal; dispose: () => void } {
  const [controller, timer] = [new AbortController(), new AbortController()];
  const onParent = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  // Rejected only when disposed before the time was up.
  if (ms !== undefined)
    clock.sleep(ms, timer.signal).then(
      () => controller.abort(reason()),
      () => undefined,
    );
  const dispose = () => {
    parent?.removeEventListener('abort', onParent);
    timer.abort();
  };
  return { signal: controller.signal, dispose };
}
