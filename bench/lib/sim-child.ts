/**
 * Starts `bench/sim-server.ts` in a child process and talks to its control interface over HTTP,
 * so the parent's CPU time and memory are the watchdog's alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

/** A simulator running in a child process. */
export interface SimChild {
  baseUrl: string;
  adminToken: string;
  /** Counts per resource at readiness. */
  stats: Record<string, number>;
  /** How long seeding and listening took in the child (ms). */
  seedMs: number;
  pid: number;
  /** Calls `POST /_sim/<method>` with the arguments; resolves to the method's result. */
  control<T = unknown>(method: string, ...args: unknown[]): Promise<T>;
  /** Stops the child and waits for it to exit. */
  close(): Promise<void>;
}

/** Options of {@link spawnSimChild}. */
export interface SimChildOptions {
  apps: number;
  seed?: number;
  maxLimit?: number;
  /** How long to wait for the readiness line; default 120 s (10,000 apps seed in a few seconds). */
  readyTimeoutMs?: number;
}

const SERVER = fileURLToPath(new URL('../sim-server.ts', import.meta.url));

/** Spawns the simulator child and waits for its readiness line. */
export async function spawnSimChild(options: SimChildOptions): Promise<SimChild> {
  const args = ['--import', 'tsx', SERVER, '--apps', String(options.apps), '--seed', String(options.seed ?? 1)];
  if (options.maxLimit !== undefined) args.push('--max-limit', String(options.maxLimit));
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const ready = await readyLine(child, options.readyTimeoutMs ?? 120_000);
  const { baseUrl, adminToken } = ready;
  let exited: Promise<void> | null = null;
  return {
    baseUrl,
    adminToken,
    stats: ready.stats,
    seedMs: ready.seedMs,
    pid: child.pid ?? -1,
    async control<T>(method: string, ...args: unknown[]): Promise<T> {
      const res = await request(`${baseUrl}/_sim/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(args),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`simulator control ${method} answered ${res.statusCode}: ${text.slice(0, 300)}`);
      return (JSON.parse(text) as { data: T }).data;
    },
    close() {
      exited ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      return exited;
    },
  };
}

interface Ready {
  baseUrl: string;
  adminToken: string;
  stats: Record<string, number>;
  seedMs: number;
}

function readyLine(child: ChildProcess, timeoutMs: number): Promise<Ready> {
  return new Promise<Ready>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`simulator child not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`simulator child exited before it was ready (code ${String(code)}, signal ${String(signal)})`));
    });
    lines.on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as Ready & { ready?: boolean };
        if (parsed.ready) {
          clearTimeout(timer);
          lines.close();
          resolve(parsed);
        }
      } catch {
        // not the readiness line
      }
    });
  });
}
