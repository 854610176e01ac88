/**
 * Test fixture: a simulator on loopback for the current test file, closed after its tests.
 *
 *   const sim = await useSimulator({ apps: 30 });   // at the top of a test file, or in an async describe
 *   const { status, body } = await apiGet(sim, '/apps?limit=5');
 */
import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import {
  DEFAULT_ADMIN_TOKEN,
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from '../../packages/simulator/src/index.js';

/** The admin token of a simulator started without `adminToken`. */
export const adminToken = DEFAULT_ADMIN_TOKEN;

/** Starts a simulator and closes it after the enclosing file's (or describe's) tests. */
export async function useSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const sim = await startSimulator(opts);
  afterAll(() => sim.close());
  return sim;
}

/** A raw answer: status, parsed JSON body (or the text when not JSON), headers. */
export interface RawAnswer {
  status: number;
  body: any; // tests inspect arbitrary answers
  text: string;
  headers: Headers;
}

async function toAnswer(res: Response): Promise<RawAnswer> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** GET `{baseUrl}/api/v1{path}` with a token (default the admin token). */
export async function apiGet(
  sim: RunningSimulator,
  path: string,
  token: string | null = sim.adminToken,
): Promise<RawAnswer> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  return toAnswer(await fetch(`${sim.baseUrl}/api/v1${path}`, { headers }));
}

/** POST a change to `{baseUrl}/api/v1{path}` with a JSON body and an idempotency key (null: none). */
export async function apiPost(
  sim: RunningSimulator,
  path: string,
  body: unknown,
  options: { key?: string | null; token?: string } = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.token ?? sim.adminToken}`,
    'content-type': 'application/json',
  };
  const key = options.key === undefined ? randomUUID() : options.key;
  if (key !== null) headers['idempotency-key'] = key;
  return toAnswer(
    await fetch(`${sim.baseUrl}/api/v1${path}`, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

/** Calls a control method over HTTP (`POST /_sim/<method>`), as an out-of-process test would. */
export async function simControl(
  sim: RunningSimulator,
  method: string,
  args: unknown[] = [],
  token = sim.adminToken,
): Promise<RawAnswer> {
  return toAnswer(
    await fetch(`${sim.baseUrl}/_sim/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(args),
    }),
  );
}
