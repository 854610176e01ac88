/**
 * Idempotency across a crash: a child process records an attempt, sends it, and is SIGKILLed
 * while the request is in flight (the service takes it; the answer never comes back). The restart
 * sends the SAME key and body again, never a fresh key:
 * - to a service that replays the stored answer: no second change, the run is followed;
 * - to a service that answers a reused key with 422: verified with runs.get, no second change.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startHoldingProxy, type HoldingProxy } from './fixtures/holding-proxy.js';
import { appOf, Harness, HOUR, MINUTE, ROTATED_TOKEN } from './remediation-fixture.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'crash-child.ts');
const SECTION = `
enabled: true
dry_run: false
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging } }
`;

let h: Harness | undefined;
let proxy: HoldingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await h?.close();
  h = undefined;
});

/**
 * Prepares a firing alert for a failed staging run, runs the child until its change request is
 * in flight at the service, kills it, and waits until the service has taken the request.
 * Returns the run id and the harness closed for the restart.
 */
async function crashMidSend(): Promise<{ runId: number; key: string; first: Harness }> {
  const first = await Harness.start(SECTION);
  h = first;
  const run = first.sim.control.addRun({
    appId: appOf(first.sim, 'staging'),
    action: 'update',
    state: 'error',
    failedStep: 'check',
  });
  await first.observe({ runs: [run.id] });
  await first.close({ keepDir: true });

  proxy = await startHoldingProxy(first.sim.baseUrl);
  // The service is slow to answer: the request is still in flight there when the child dies.
  first.sim.control.setFault('runs.retry', { latencyMs: 300, times: 1 });
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CHILD,
      JSON.stringify({
        dir: first.dir,
        baseUrl: proxy.url,
        token: first.sim.adminToken,
        now: first.clock.now(),
        section: SECTION,
      }),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );

  const p = proxy;
  await vi.waitFor(() => expect(p.arrived, output).toBe(1), { timeout: 20_000, interval: 20 });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(output).toContain('planned 1');
  expect(output).not.toContain('answer recorded');
  // The service took the request and stored its answer; the dead process never saw it.
  await vi.waitFor(() => expect(p.answered).toEqual([200]), { timeout: 5_000, interval: 20 });
  return { runId: run.id, key: `dw-${first.installation}.1-retry-staging-run${run.id}-a1`, first };
}

describe('a crash between sending a change and recording its answer', () => {
  it('the restart sends the same key and body again; the stored answer comes back, no second change', async () => {
    const { runId, key, first } = await crashMidSend();
    h = first.restart(SECTION);
    // What the crash left: the attempt with its key, sent once, no answer recorded.
    expect(h.attempts()).toMatchObject([{ key, status: 'planned', sendCount: 1, answer: null, body: { now: false } }]);

    await h.pass();
    // Both requests carry the same key; the second is answered from the service's idempotency
    // store (a real second retry of a run already going again would have been refused).
    expect(h.changes('runs.retry')).toEqual([
      { key, status: 200 },
      { key, status: 200 },
    ]);
    expect(h.attempts()).toMatchObject([{ key, status: 'following', answer: 'started', runId, sendCount: 2 }]);
    // The service marked its answer as a replay (Idempotent-Replayed): the audit says so.
    expect(h.audit().find((a) => a.decision === 'answered')).toMatchObject({
      answer: 'started',
      detail: 'started: replayed, the answer to an earlier send of this key',
    });

    h.clock.advance(10 * MINUTE);
    await h.pass();
    await h.cycleAndPass({ runs: [runId] });
    expect(h.attempts()).toHaveLength(1);
    expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
    expect(h.changes('runs.retry')).toHaveLength(2);
    expect(h.notices().map((n) => n.notice.title)).toEqual(['Retried automatically: succeeded']);
  });

  it('a service that answers the reused key with 422: verified with runs.get, no fresh key, no second change', async () => {
    const { runId, key, first } = await crashMidSend();
    // Restarted with a rotated token, the service does not replay the earlier answer; it says
    // the key was used (as the reference allows) and changes nothing.
    h = first.restart(SECTION, { token: ROTATED_TOKEN });
    h.sim.control.setFault('runs.retry', { errorCode: 'idempotency_key_reused' });
    await h.pass();

    expect(h.changes('runs.retry')).toEqual([
      { key, status: 200 },
      { key, status: 422 },
    ]);
    const reads = h.sim.control.requests().filter((r) => r.fn === 'runs.get' && r.path.endsWith(`/runs/${runId}`));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(h.attempts()).toMatchObject([
      { key, status: 'following', answer: 'idempotency_key_reused', runId, counted: true },
    ]);

    h.clock.advance(10 * MINUTE);
    await h.pass();
    expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
    // A later cycle never sends a fresh key for what was already taken.
    await h.cycleAndPass({ runs: [runId] });
    h.clock.advance(HOUR + MINUTE);
    await h.cycleAndPass({ runs: [runId] });
    expect(h.changes('runs.retry').map((c) => c.key)).toEqual([key, key]);
    expect(h.audit().find((a) => a.decision === 'answered')).toMatchObject({
      answer: 'idempotency_key_reused',
      reason: 'earlier request with this key was taken; verifying with reads',
    });
  });
});
