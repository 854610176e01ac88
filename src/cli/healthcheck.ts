/**
 * `deploy-watchdog healthcheck`: asks the running daemon's `/healthz` on the port its config
 * gives (`server.listen`), for a container's HEALTHCHECK or a supervisor's probe: 0 alive, 1 not.
 * It reads the `server` section only, so the daemon's secrets need not be set where it runs.
 * `/healthz`, not `/readyz`: a daemon that is up but cannot read the API is not helped by a restart.
 */
import { loadConfigSection } from '../config/load-config.js';
import { errorText } from '../lib/error-text.js';
import { parseListen } from '../config/parse-listen.js';
import { defineCommand } from './cli-helpers.js';
import { EXIT, print, UsageError } from './command.js';
import { CONFIG_FILE_DEFAULTS } from './config-file.js';

const usage = `usage: deploy-watchdog healthcheck [--config FILE] [--timeout SECONDS]

Asks the daemon's /healthz at the address of the config's server.listen (an address on every
interface is asked on loopback) and exits 0 when it answers 200, 1 otherwise, 2 for a bad config.
The image's HEALTHCHECK runs it. With server.listen "off" there is no listener to ask: it says so
and exits 0.

  --config FILE        the configuration file (${CONFIG_FILE_DEFAULTS})
  --timeout SECONDS    how long to wait for the answer (default 4)`;

const DEFAULT_TIMEOUT_S = 4;

/** The address to ask for a listen address: one on every interface is asked on loopback. */
export function healthzUrl(listen: string): string {
  const { host, port } = parseListen(listen);
  const asked = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${asked.includes(':') ? `[${asked}]` : asked}:${port}/healthz`;
}

/** `deploy-watchdog healthcheck [--config FILE] [--timeout SECONDS]`. */
const healthcheck = defineCommand({
  usage,
  options: { timeout: { type: 'string' } },
  parse: ({ values }) => {
    const seconds = values.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(values.timeout);
    if (!(seconds > 0 && seconds <= 300)) {
      throw new UsageError(`--timeout must be a number of seconds above 0 and at most 300, got ${values.timeout}`);
    }
    return seconds * 1000;
  },
  async run(timeoutMs, io, file) {
    const { listen } = loadConfigSection(file, io.env, 'server');
    if (listen === null) return print(io.stdout, 'server.listen is "off": no listener to ask\n');
    const url = healthzUrl(listen);
    try {
      const res = await fetch(url, { signal: AbortSignal.any([io.signal, AbortSignal.timeout(timeoutMs)]) });
      const body = (await res.text()).slice(0, 200);
      if (res.status === 200) return print(io.stdout, `${url}: ${res.status} ${body}\n`);
      return print(io.stderr, `${url}: ${res.status} ${body}\n`, EXIT.incomplete);
    } catch (err) {
      const why =
        err instanceof Error && err.name === 'TimeoutError'
          ? `no answer within ${timeoutMs / 1000}s`
          : errorText((err as { cause?: unknown }).cause ?? err);
      return print(io.stderr, `${url}: ${why}\n`, EXIT.incomplete);
    }
  },
});

export default healthcheck;
