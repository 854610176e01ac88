/**
 * What the pages say, against a real daemon in which the notify and remediation stages have done
 * their work: why an alert is held (a route's mute window) or inhibited (its server is in a bad
 * state), an alert's timeline with its remediation attempt (idempotency key, answer, outcome) and
 * audit, and the audit page. Read over HTTP, as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { listAttempts } from '../../src/remediation/remediation-store.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { startConsoleDaemon, type ConsoleDaemon } from './console-fixture.js';

const REASON = 'console: the health check timed out';
let daemon: ConsoleDaemon;
let runId = 0;
let badServer = '';

/** A failed staging run for the retry policy, and a server in a bad state. */
function prepare(sim: RunningSimulator): void {
  const state = sim.control.state;
  const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
  const app = [...state.apps.values()].find(
    (a) => a.envType === 'staging' && !busy.has(a.id) && !a.upgrade && a.state === 'running',
  )!;
  runId = sim.control.addRun({
    appId: app.id,
    action: 'update',
    state: 'error',
    failedStep: 'restart',
    reason: REASON,
  }).id;
  const server = [...state.servers.values()].find((s) => [...state.apps.values()].some((a) => a.serverId === s.id))!;
  sim.control.checks.servers.setState(server.id, 'error');
  badServer = server.name;
}

/** The page's text without its markup (and with entities read back). */
async function text(path: string): Promise<string> {
  const res = await fetch(`${daemon.base}${path}`);
  expect(res.status).toBe(200);
  return (await res.text())
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

beforeAll(async () => {
  daemon = await startConsoleDaemon({
    sim: { seed: 3 },
    prepare,
    notify: [
      'notify:',
      '  channels: [{ name: ops, type: log }, { name: quiet, type: log }]',
      '  mute_windows: [{ name: always, times: [{ start: "00:00", end: "24:00" }] }]',
      '  routes:',
      '    - { match: { check: backups }, channels: [quiet], mute_windows: [always] }',
      '    - { channels: [ops] }',
    ].join('\n'),
    extra: [
      'remediation:',
      '  enabled: true',
      '  dry_run: false',
      '  policies:',
      '    - { name: retry-console, action: runs.retry, match: { environment_type: staging }, match_re: { reason: "console: .*" }, max_attempts: 1 }',
    ].join('\n'),
  });
  await daemon.wd.remediateOnce();
});
afterAll(() => daemon?.close());

describe('the pages say why', () => {
  it('shows a muted route holding an alert, with the window named', async () => {
    const backups = alertStoreOf(daemon.wd.store)
      .open()
      .find((a) => a.check === 'backups' && a.status === 'firing')!;
    expect(backups).toBeDefined();
    const page = await text('/');
    expect(page).toContain('quiet : firing held: muted_window (mute window always)');
    const alertPage = await text(`/alert?fp=${encodeURIComponent(backups.fingerprint)}`);
    expect(alertPage).toContain('quiet route-1 held muted_window mute window always');
  });

  it("shows an app on a server in a bad state inhibited by the server's alert", async () => {
    const open = alertStoreOf(daemon.wd.store).open();
    const cause = open.find((a) => a.check === 'servers' && a.labels.server === badServer)!;
    const held = open.find((a) => a.check !== 'servers' && a.labels.server === badServer)!;
    expect(cause && held).toBeTruthy();
    const page = await text(`/alert?fp=${encodeURIComponent(held.fingerprint)}`);
    expect(page).toContain(`inhibited (bad_servers) by ${cause.summary}`);
    expect(await text('/')).toContain(`inhibited (bad_servers) by ${cause.summary}`);
  });

  it("shows an alert's remediation: the attempt's key, answer and the audit, there and on the audit page", async () => {
    const [attempt] = listAttempts(daemon.wd.store);
    expect(attempt).toMatchObject({ policy: 'retry-console', recordId: runId });
    const page = await text(`/alert?fp=${encodeURIComponent(attempt!.fingerprint)}`);
    expect(page).toContain(`retry-console runs.retry run #${runId} 1 ${attempt!.key}`);
    expect(page).toContain('remediation acted retry-console runs.retry');
    expect(page).toContain(`remediation answered retry-console`);
    const audit = await text('/actions?policy=retry-console');
    expect(audit).toContain(attempt!.key);
    expect(audit).toContain('acted');
  });

  it('shows a job whose read was refused for the rate limit: its error, and the 429 counted by function', async () => {
    daemon.sim.control.setFault('servers.list', { rateLimit: { retryAfter: 'none' }, times: 1 });
    expect((await daemon.wd.runOnce(['servers'])).jobs[0]!.outcome).toBe('failed');
    const page = await fetch(`${daemon.base}/sources`).then((r) => r.text());
    const job = /<tr data-job="servers"[^]*?<\/tr>/.exec(page)![0];
    expect(job).toContain('rate_limited');
    expect(job).toMatch(/<td>1<\/td>/);
    const api = /<tr>\s*<td><code>servers\.list<\/code><\/td>[^]*?<\/tr>/.exec(page)![0];
    expect(api).toMatch(/<td class="warn">1<\/td>/);
    expect(api).toContain('rate_limited: 1');
  });
});
