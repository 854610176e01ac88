/**
 * The alerts' context as the notification pipeline sees it (`AlertContextSource`), over the
 * `alert_context` table: a new alert's message waits while its run's context is pending, and every
 * message about a firing alert shows the context once it is read (a repeat included, at no cost:
 * it is read once per run). A resolve shows none: what was is not shown again.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import { contextAskOf } from '../detectors/registry.js';
import type { AlertContext } from '../lib/alert-vocabulary.js';
import type { AlertContextSource } from '../notify/alert-context-source.js';
import { contextKey, type ContextStore } from './context-store.js';

/**
 * The pipeline's view of the context table, messages waiting up to `waitMs`, counted from the ask
 * or from `from` (when this runtime was built), whichever is later: an ask left pending by a crash
 * or a stop is read after the restart before its message goes without it.
 */
export function alertContextSource(store: ContextStore, waitMs: number, from: number): AlertContextSource {
  // Only the alerts whose check asks for a context have one (another check's alert about the same run does not).
  const rowOf = (event: AlertEvent) => {
    const key = contextKey(event.subject);
    if (key === null || contextAskOf({ ...event, subject: event.subject ?? null }) === null) return undefined;
    return store.get(key);
  };
  return {
    pending(event) {
      const row = rowOf(event);
      return row?.status === 'pending' ? { since: Math.max(row.requestedAt, from), waitMs } : undefined;
    },
    attach(event) {
      if (event.kind === 'resolved') return event;
      const context = rowOf(event)?.context;
      return context && saysSomething(context) ? { ...event, context } : event;
    },
  };
}

function saysSomething(context: AlertContext): boolean {
  return context.facts.length > 0 || context.log !== null || context.notes.length > 0;
}
