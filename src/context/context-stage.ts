/**
 * The context stage of the cycle sink (`commitFindings`): inside the cycle's transaction, before
 * the outbox, it records which new alerts the API can say more about, and nothing else. No request
 * is made here (the cycle is never slowed by one); the reader (`context-reader.ts`) reads them
 * after the commit, on its own loop, woken here. A run is asked about once: a firing or escalated
 * event of a run already asked about (pending or read) adds nothing, and a repeat or a resolve
 * never asks. Recorded in the same transaction as the events, so a crash after the commit loses no
 * ask (it is read after the restart), and a rollback leaves none.
 */
import type { CommittedCycle, CycleStage } from '../alerts/commit-findings.js';
import { contextAskOf } from '../detectors/registry.js';
import type { Logger } from '../lib/logger.js';
import { contextKey, type ContextStore } from './context-store.js';

/** Records asks for context in the cycle's transaction; wakes the reader. */
export class ContextStage implements CycleStage {
  constructor(
    private readonly store: ContextStore,
    private readonly reader: { wake(): void },
    private readonly log: Logger,
  ) {}

  take(cycle: CommittedCycle): void {
    let asked = 0;
    for (const event of cycle.events) {
      if (event.kind !== 'firing' && event.kind !== 'escalated') continue;
      const ask = contextAskOf({ ...event, subject: event.subject ?? null });
      const key = ask && contextKey(event.subject);
      if (ask && key && this.store.ask(key, event.fingerprint, ask, cycle.now)) asked += 1;
    }
    if (asked === 0) return;
    this.log.debug({ job: cycle.job, asked }, 'alert context asked');
    // Woken now, the loop reads on a later tick: after this synchronous transaction has committed.
    this.reader.wake();
  }
}
