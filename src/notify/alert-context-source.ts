/**
 * What the notification pipeline asks of the alerts' context (read after the cycle by
 * `src/context/`, handed in by the composition root): whether a new alert's message should wait for
 * its context, and the context to show once read. The pipeline knows nothing of how it is read.
 */
import type { AlertEvent } from '../alerts/alert-event.js';

/** The alerts' context as the outbox and delivery see it. */
export interface AlertContextSource {
  /**
   * Since when the context of the event's alert is being read (ms), and how long a new alert's
   * message waits for it (`notify.context.wait`, ms); undefined: nothing to wait for.
   */
  pending(event: AlertEvent): { since: number; waitMs: number } | undefined;
  /** The event with the context read for its alert (none for a resolve); the event itself when there is none. */
  attach(event: AlertEvent): AlertEvent;
}
