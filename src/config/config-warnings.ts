import type { ConfigProblem } from './config-error.js';
import type { Config } from './load-config.js';

/**
 * What a valid configuration says that its author most likely did not mean: said by `validate`,
 * and logged when the daemon starts or reloads, never refused (each can be meant, for a while).
 * - No channel: alerts are recorded and listed by `alerts`, and nobody is told of any.
 */
export function configWarnings(config: Config): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  if (config.notify.channels.length === 0) {
    warnings.push({
      path: 'notify.channels',
      message:
        "no channel is configured: alerts are recorded (see `deploy-watchdog alerts`) and nobody is told; add one (type: log writes them to the daemon's log)",
    });
  }
  return warnings;
}
