/**
 * Idempotency of changes, per token and key: the same key with the same function and body gets
 * the stored answer again (same status); the same key with a different request is
 * `idempotency_key_reused`; a key whose first request is still being handled is
 * `request_in_progress`. Answers with a 5xx status and injected faults are not stored, so a
 * client may retry them with the same key.
 */

/** A stored answer. */
export interface StoredAnswer {
  status: number;
  body: string;
}

/** What the store says about an incoming change. */
export type IdempotencyDecision =
  { kind: 'new' } | { kind: 'replay'; answer: StoredAnswer } | { kind: 'reused' } | { kind: 'in_flight' };

interface Entry {
  fingerprint: string;
  answer: StoredAnswer | null;
}

/** Remembers changes by (token, key). */
export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  /** Looks the key up; a new key is marked in flight. */
  begin(scope: string, key: string, fingerprint: string): IdempotencyDecision {
    const id = `${scope}\u0000${key}`;
    const entry = this.entries.get(id);
    if (!entry) {
      this.entries.set(id, { fingerprint, answer: null });
      return { kind: 'new' };
    }
    if (entry.fingerprint !== fingerprint) return { kind: 'reused' };
    if (!entry.answer) return { kind: 'in_flight' };
    return { kind: 'replay', answer: entry.answer };
  }

  /** Stores the answer of a key's first request. */
  finish(scope: string, key: string, answer: StoredAnswer): void {
    const entry = this.entries.get(`${scope}\u0000${key}`);
    if (entry) entry.answer = answer;
  }

  /** Forgets a key whose request did not complete (fault, 5xx), so it can be sent again. */
  abandon(scope: string, key: string): void {
    this.entries.delete(`${scope}\u0000${key}`);
  }
}
