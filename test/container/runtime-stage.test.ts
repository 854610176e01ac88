/**
 * The Dockerfile's runtime stage, performed on the host (no Docker engine on the build machines):
 * compile as the build stage does, keep production dependencies only (`npm prune --omit=dev` on the
 * build stage's node_modules), then start the compiled entry point exactly as the image's
 * ENTRYPOINT/CMD would, against the simulator, and ask it /healthz.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('container runtime stage', () => {
  let app: string;
  let sim: RunningSimulator;
  let daemon: ChildProcess | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    app = mkdtempSync(path.join(tmpdir(), 'dw-image-'));
    // Build stage: the sources compiled with the project's build config, and its node_modules.
    await run(process.execPath, [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      path.join(app, 'dist'),
    ]);
    for (const file of ['package.json', 'package-lock.json']) cpSync(path.join(ROOT, file), path.join(app, file));
    cpSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    // `npm prune --omit=dev`, as the build stage ends: what the runtime stage copies.
    await run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app });
    sim = await startSimulator({ apps: 10, seed: 3 });
  }, 180_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) daemon.kill('SIGKILL');
    await sim?.close();
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('keeps production dependencies only', () => {
    for (const dev of ['typescript', 'vitest', 'tsx', 'dockerfile-utils', 'smtp-server', 'mailparser']) {
      expect(existsSync(path.join(app, 'node_modules', dev)), `${dev} should be pruned`).toBe(false);
    }
    for (const prod of ['better-sqlite3', 'undici', 'pino', 'zod', 'node-cron']) {
      expect(existsSync(path.join(app, 'node_modules', prod)), `${prod} should be kept`).toBe(true);
    }
  });

  it('refuses the demo, whose stand-ins are development dependencies, saying so', async () => {
    const [node, ...entrypoint] = dockerfileInstruction('ENTRYPOINT');
    expect(node).toBe('node');
    const demo = await run(process.execPath, [...entrypoint, 'demo', '--duration', '5s'], {
      cwd: app,
      env: { PATH: process.env.PATH, ...dockerfileEnv() },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(demo.code).toBe(2);
    expect(demo.stderr).toMatch(
      /^the demo needs the development dependencies, and (smtp-server|mailparser) is not installed: .*npm ci/,
    );
  });

  it('starts the compiled entry point as the image does and answers /healthz, then stops on SIGTERM', async () => {
    mkdirSync(path.join(app, 'data'));
    const port = await freePort();
    const configFile = path.join(app, 'config.yaml');
    writeFileSync(
      configFile,
      [
        'api:',
        `  base_url: ${sim.baseUrl}`,
        '  token: ${DMS_API_TOKEN}',
        'state:',
        `  path: ${path.join(app, 'data', 'state.db')}`,
        'notify:',
        '  channels: [{ name: console, type: log }]',
        'server:',
        `  listen: 127.0.0.1:${port}`,
        'log:',
        '  format: json',
        '',
      ].join('\n'),
    );
    // The image's ENTRYPOINT (node with its options, the entry point) + CMD ["run", "--config", …]
    // and its ENV (NODE_ENV=production, …); `node` is this test's node.
    const [node, ...entrypoint] = dockerfileInstruction('ENTRYPOINT');
    const [command, configFlag] = dockerfileInstruction('CMD');
    expect(node).toBe('node');
    daemon = spawn(process.execPath, [...entrypoint, command!, configFlag!, configFile], {
      cwd: app,
      env: { PATH: process.env.PATH, ...dockerfileEnv(), DMS_API_TOKEN: sim.adminToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemon.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    daemon.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const exited = new Promise<number | null>((resolve) => daemon?.once('exit', (code) => resolve(code)));

    await waitFor(() => output.join('').includes('listener started'), 60_000);
    const res = await request(`http://127.0.0.1:${port}/healthz`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ status: 'ok' });

    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output.join('')).not.toContain(sim.adminToken);
  }, 90_000);
});

/** The JSON arguments of the Dockerfile's top-level `name` instruction (its last, as Docker takes it). */
function dockerfileInstruction(name: 'ENTRYPOINT' | 'CMD'): string[] {
  const lines = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith(`${name} [`));
  return JSON.parse(lines.at(-1)!.slice(name.length)) as string[];
}

/** The runtime stage's `ENV name=value …` (one line, no quoting: what this Dockerfile uses). */
function dockerfileEnv(): Record<string, string> {
  const line = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('ENV '))
    .at(-1)!;
  return Object.fromEntries(
    line
      .slice('ENV '.length)
      .trim()
      .split(/\s+/)
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
}

/** A port nobody listens on right now (the config refuses port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(probe: () => T | undefined | null | false, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > until) throw new Error('timed out waiting for the daemon');
    await new Promise((r) => setTimeout(r, 100));
  }
}
