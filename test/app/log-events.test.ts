import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { logEvents } from '../../src/app/job-cycle.js';
import { captureLogger } from './fixtures.js';

/** Just what the log line reads of an event. */
function event(i: number, kind: 'firing' | 'resolved'): AlertEvent {
  return {
    kind,
    fingerprint: `backups/app/${i}`,
    severity: 'warning',
    summary: `app ${i} has no backup`,
  } as AlertEvent;
}

describe("a cycle's alert events in the log", () => {
  it('are a line each up to 100; a storm past that is counted by kind in one more line', () => {
    const log = captureLogger('info');
    const storm = [
      ...Array.from({ length: 150 }, (_, i) => event(i, 'firing')),
      ...Array.from({ length: 50 }, (_, i) => event(150 + i, 'resolved')),
    ];
    logEvents(log.logger, storm);
    const lines = log.lines();
    expect(lines).toHaveLength(101);
    expect(lines.slice(0, 100).map((l) => l.fingerprint)).toEqual(storm.slice(0, 100).map((e) => e.fingerprint));
    expect(lines[100]).toMatchObject({
      more: { firing: 50, resolved: 50 },
      msg: 'and 100 more alert events this cycle: the console lists them',
    });
  });

  it('are a line each, and nothing more, when there are 100 or fewer', () => {
    const log = captureLogger('info');
    logEvents(
      log.logger,
      Array.from({ length: 100 }, (_, i) => event(i, 'firing')),
    );
    expect(log.lines()).toHaveLength(100);
    expect(log.text()).not.toContain('more alert events');
  });
});
