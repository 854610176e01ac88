import { Writable } from 'node:stream';
import type { AlertEvent } from '../../../src/alerts/alert-event.js';
import { presented } from '../../../src/detectors/registry.js';
import { createLogger, type Logger } from '../../../src/lib/logger.js';
import type { AlertsNotification } from '../../../src/notify/channels/channel.js';

/** Now in every channel test: ManualClock's default start, 2026-11-01 12:00 UTC. */
export const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);

/**
 * A failed-run alert event in production, two hours old; override what a test is about. Its facts
 * and brief are its check's presentation of its details, as the lifecycle stores them, unless
 * `over` gives facts.
 */
export function alertEvent(over: Partial<AlertEvent> = {}): AlertEvent {
  const event: AlertEvent = {
    id: 1,
    kind: 'firing',
    fingerprint: 'failed_runs/run/123',
    check: 'failed_runs',
    severity: 'critical',
    summary: 'Update of shop (production) failed at step install',
    details: { run: '#123', step: 'install', reason: 'exit code 1' },
    labels: {
      check: 'failed_runs',
      namespace: 'acme',
      project: 'webshop',
      environment_type: 'production',
      app: 'shop',
    },
    url: 'https://shop.example.com/',
    startsAt: '2026-11-01T10:00:00.000Z',
    endsAt: null,
    at: '2026-11-01T12:00:00.000Z',
    ...over,
  };
  if (over.facts) return event;
  const { facts, brief } = presented(event);
  return { ...event, facts, ...(brief === undefined ? {} : { brief }) };
}

/** A notification of the given events, grouped by check and environment. */
export function alerts(events: AlertEvent[], omitted = 0): AlertsNotification {
  return { type: 'alerts', group: { check: 'failed_runs', environment_type: 'production' }, events, omitted };
}

/** A JSON logger at debug level whose lines are kept, to assert nothing secret was logged. */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', format: 'json', destination }), lines };
}
