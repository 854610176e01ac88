/**
 * `deploy-watchdog healthcheck`: the image's HEALTHCHECK. It asks /healthz at the port the config
 * gives (not a fixed 9464), needs none of the daemon's secrets, and fails when the daemon does not
 * answer 200.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { healthzUrl } from '../../src/cli/healthcheck.js';
import { silentLogger } from '../../src/lib/logger.js';
import { startHealthServer, type HealthServer } from '../../src/server/health-server.js';
import { Metrics } from '../../src/lib/metrics.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import { freePort } from '../helpers/free-port.js';

let dir: string;
let server: HealthServer;
const daemon = { alive: true };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-healthcheck-'));
  // On every interface, as a container's config sets it: the check asks loopback.
  server = await startHealthServer({
    listen: `:${await freePort()}`,
    metrics: new Metrics({ processMetrics: false }),
    logger: silentLogger,
    source: { alive: () => daemon.alive, readiness: () => [{ check: 'job:runs', ok: false, detail: 'late' }] },
  });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Waits until the front door says what the daemon's liveness now is (published within a beat). */
async function saidAlive(status: number): Promise<void> {
  const url = `http://127.0.0.1:${server.address.port}/healthz`;
  await vi.waitFor(
    async () => {
      const res = await fetch(url);
      await res.text();
      expect(res.status).toBe(status);
    },
    { timeout: 10_000 },
  );
}

/** A config whose secrets come from variables this shell does not set, listening at `listen`. */
function config(listen: string): string {
  return writeConfig(dir, [
    'api: { base_url: "https://manage.example.com", token: "${DMS_API_TOKEN}" }',
    'notify:',
    '  channels:',
    '    - name: ops',
    '      type: slack',
    '      webhook_url: ${SLACK_WEBHOOK_URL}',
    `server: { listen: "${listen}" }`,
  ]);
}

describe('healthzUrl', () => {
  it.each([
    ['127.0.0.1:9464', 'http://127.0.0.1:9464/healthz'],
    [':9464', 'http://127.0.0.1:9464/healthz'],
    ['0.0.0.0:8080', 'http://127.0.0.1:8080/healthz'],
    ['[::]:8080', 'http://[::1]:8080/healthz'],
    ['[::1]:9464', 'http://[::1]:9464/healthz'],
    ['localhost:7000', 'http://localhost:7000/healthz'],
  ])('asks %s at %s', (listen, url) => {
    expect(healthzUrl(listen)).toBe(url);
  });
});

describe('deploy-watchdog healthcheck', () => {
  it("exits 0 when the daemon answers /healthz on the config's port, without its secrets", async () => {
    daemon.alive = true;
    await saidAlive(200);
    const { code, stdout } = await runCli(['healthcheck', '--config', config(`0.0.0.0:${server.address.port}`)]);
    expect(code).toBe(0);
    // /healthz, not /readyz: the daemon is not ready here (a late job), and still healthy.
    expect(stdout).toBe(`http://127.0.0.1:${server.address.port}/healthz: 200 {"status":"ok"}\n`);
  });

  it('exits 1 when the daemon says it is not alive', async () => {
    daemon.alive = false;
    await saidAlive(503);
    const { code, stderr } = await runCli(['healthcheck', '--config', config(`127.0.0.1:${server.address.port}`)]);
    daemon.alive = true;
    await saidAlive(200);
    expect(code).toBe(1);
    expect(stderr).toBe(`http://127.0.0.1:${server.address.port}/healthz: 503 {"status":"stopped"}\n`);
  });

  it('exits 1 when nothing listens on the port', async () => {
    const port = await freePort();
    const { code, stderr } = await runCli(['healthcheck', '--config', config(`127.0.0.1:${port}`)]);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/healthz: .*ECONNREFUSED`));
  });

  it('exits 0, saying so, when the config has no listener', async () => {
    const { code, stdout } = await runCli(['healthcheck', '--config', config('off')]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'server.listen is "off": no listener to ask\n' });
  });

  it('exits 2 when the variable of server.listen is not set', async () => {
    const { code, stderr } = await runCli(['healthcheck', '--config', config('${LISTEN}')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/server\.listen: environment variable LISTEN is not set/);
  });

  it.each(['0', 'soon', '301'])('refuses --timeout %s', async (timeout) => {
    const { code, stderr } = await runCli(['healthcheck', '--config', config('off'), '--timeout', timeout]);
    expect(code).toBe(2);
    expect(stderr).toContain('--timeout must be a number of seconds above 0 and at most 300');
  });
});
