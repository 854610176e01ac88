import { randomBytes } from 'node:crypto';
import { createLogger } from '../lib/logger.js';
import { startSimulator } from '../simulator/index.js';
import { parseCommandArgs, reportUsageError } from './cli-helpers.js';
import { EXIT, UsageError, type Command } from './command.js';

const usage = `usage: deploy-watchdog simulator [--port P] [--host H] [--apps N] [--seed S] [--token T]

Serves a simulated Deployment Management Service (seeded data, runs that move with time) until
Ctrl-C. Prints the base URL and the admin token it accepts; the control interface is at
POST {base URL}/_sim/<method> with that token.

  --port P    port to listen on (default 4010; 0 picks a free one)
  --host H    address to bind (default 127.0.0.1)
  --apps N    number of apps, 1 to 10000 (default 50)
  --seed S    seed of the generated data (default 1)
  --token T   admin token to accept (default: a random one, printed)`;

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be an integer, got "${raw}"`);
  const value = Number.parseInt(raw, 10);
  if (value < min || value > max) throw new UsageError(`--${name} must be from ${min} to ${max}, got ${value}`);
  return value;
}

/** `deploy-watchdog simulator`: the fake service, for demos and out-of-process tests. */
const simulator: Command = {
  name: 'simulator',
  summary: 'serve a simulated Deployment Management Service on loopback',
  usage,
  async run(argv, io) {
    let options: { port: number; host: string; apps: number; seed: number; token: string };
    try {
      const { values } = parseCommandArgs(argv, {
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        apps: { type: 'string', short: 'n' },
        seed: { type: 'string', short: 's' },
        token: { type: 'string', short: 't' },
      });
      if (values.token !== undefined && !/^\S{8,}$/.test(values.token)) throw new UsageError('--token must be at least 8 characters without spaces');
      options = {
        port: integer('port', values.port, 4010, 0, 65_535),
        host: values.host ?? '127.0.0.1',
        apps: integer('apps', values.apps, 50, 1, 10_000),
        seed: integer('seed', values.seed, 1, 0, 2 ** 31 - 1),
        token: values.token ?? `sim-${randomBytes(16).toString('hex')}`,
      };
    } catch (err) {
      return reportUsageError(io, usage, err);
    }
    const logger = createLogger({ level: io.env.LOG_LEVEL ?? 'warn', format: 'json', destination: io.stderr });
    const sim = await startSimulator({ apps: options.apps, seed: options.seed, host: options.host, port: options.port, adminToken: options.token, logger });
    io.stdout.write(
      [
        `simulator listening on ${sim.baseUrl} (API root ${sim.baseUrl}/api/v1, ${options.apps} apps, seed ${options.seed})`,
        `token: ${sim.adminToken}`,
        `try: curl -H "Authorization: Bearer ${sim.adminToken}" ${sim.baseUrl}/api/v1/attention`,
        '',
      ].join('\n'),
    );
    if (!io.signal.aborted) await new Promise<void>((resolve) => io.signal.addEventListener('abort', () => resolve(), { once: true }));
    await sim.close();
    io.stdout.write('simulator stopped\n');
    return EXIT.ok;
  },
};

export default simulator;
