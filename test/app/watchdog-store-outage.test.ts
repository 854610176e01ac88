/**
 * The state fails under a running daemon (its SQLite connection closed, as a damaged file or a
 * database that went away leaves it) for ten minutes on the fake clock: every background loop
 * (the outbox's housekeeping and channel, remediation's send-and-follow, the context reader) backs
 * off instead of going round at once, their lines are said once a minute with a count, and the
 * whole log stays far under 1 MB. Then the stop ends every loop, though the flush fails: nothing
 * runs (or logs) after it.
 */
import { describe, expect, it, vi } from 'vitest';
import { sqliteHandle } from '../helpers/state-backends.js';
import { captureLogger, engineHarness, MINUTE } from './fixtures.js';

const h = engineHarness();

const CONFIG = [
  'jobs: { runs: "0 0 1 1 *", urls: "off", backups: "off", attention: "off", maintenance: "off", servers: "off", installers: "off" }',
  'remediation:',
  '  enabled: true',
  '  dry_run: false',
  '  policies: [{ name: retry-all, action: runs.retry }]',
].join('\n');

/** Moves the fake clock `ms` in steps, letting the loops run between them. */
async function drive(clock: { advance(ms: number): void }, ms: number, stepMs = 250): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    clock.advance(stepMs);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  }
}

/** Failures a message stands for: each plain line one, each "(repeated N times …)" line N. */
function failuresOf(lines: Record<string, unknown>[], msg: string, loop?: string): number {
  return lines
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith(msg) && (loop === undefined || l.loop === loop))
    .reduce((n, l) => n + (typeof l.repeated === 'number' ? l.repeated : 1), 0);
}

describe('a state that fails for ten minutes under a running daemon', () => {
  it('backs off every loop, keeps the log short, and stops every loop at the stop', async () => {
    const log = captureLogger('info');
    const wd = h.watchdog(CONFIG, { logger: log.logger });
    await wd.start();
    // Every loop asleep on the clock before the state goes.
    await vi.waitFor(() => expect(h.clock.nextWakeAt()).toBeDefined(), { timeout: 10_000, interval: 20 });
    sqliteHandle(wd.store).close();
    const before = log.lines().length;
    const bytesBefore = log.text().length;

    await drive(h.clock, 10 * MINUTE);

    const outage = log.lines().slice(before);
    const bytes = log.text().length - bytesBefore;
    expect(bytes).toBeLessThan(1_000_000);
    // Per loop, about 15 passes in ten minutes (1 s doubling to 1 min); said in about a dozen lines.
    const loops = [
      ['delivery round failed', 'housekeeping'],
      ['delivery round failed', 'console'],
      ['remediation pass failed', undefined],
      ['context pass failed', undefined],
    ] as const;
    for (const [msg, loop] of loops) {
      const failures = failuresOf(outage, msg, loop);
      expect(failures, `${msg} ${loop ?? ''}`).toBeGreaterThanOrEqual(8);
      expect(failures, `${msg} ${loop ?? ''}`).toBeLessThanOrEqual(25);
    }
    expect(outage.length).toBeLessThan(80);
    expect(outage.some((l) => /\(repeated \d+ times in the last \d+ s\)$/.test(String(l.msg)))).toBe(true);
    expect(bytes / outage.length).toBeLessThan(2_000);

    // The stop: the flush fails on the dead state, yet every loop ends before the store closes.
    await wd.stop(1_000).catch(() => undefined);
    const atStop = log.lines().length;
    await drive(h.clock, 5 * MINUTE, 1_000);
    expect(
      log
        .lines()
        .slice(atStop)
        .map((l) => l.msg),
    ).toEqual([]);
    expect(h.clock.nextWakeAt()).toBeUndefined();
  });
});

describe('a cycle that cannot write its result', () => {
  it('says why in one short line, without a stack trace', async () => {
    const log = captureLogger('info');
    const wd = h.watchdog(CONFIG, { logger: log.logger });
    await wd.runOnce(['runs']);
    sqliteHandle(wd.store).close();
    expect((await wd.runOnce(['runs'])).jobs[0]!.outcome).toBe('failed');
    const line = log.lines().find((l) => l.msg === 'cycle failed to write its result')!;
    expect(line.err).toBe('TypeError: The database connection is not open');
    await wd.stop(1_000).catch(() => undefined);
  });
});
