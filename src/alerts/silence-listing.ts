/**
 * Silences as a person reads them, the same in `deploy-watchdog silences` and the console: each
 * with its state now and how many open alerts it covers; and, before a silence is made, which open
 * alerts a set of matchers would cover (the console's preview).
 */
import type { Store } from '../state/store.js';
import { alertStoreOf, type AlertRow } from './alert-store.js';
import { compileMatchers, type LabelMatcher } from './matchers.js';
import { listSilences, silenceState, type Silence, type SilenceState } from './silences.js';

/** One silence with what is said beside it. */
export interface SilenceListing {
  silence: Silence;
  state: SilenceState;
  /** Open alerts it matches now. */
  openAlerts: number;
  /** When it ends or ended: its end, or when it was ended by hand before that. */
  until: number;
}

/** The silences not over at `now` (every stored one with `includeExpired`), as `listSilences` orders them. */
export function silenceListing(store: Store, options: { now: number; includeExpired?: boolean }): SilenceListing[] {
  const open = alertStoreOf(store).open();
  return listSilences(store, options).map((silence) => {
    // A silence whose stored pattern RE2 refuses mutes nothing, so it covers no alert.
    const matches = silence.refused === null ? compileMatchers(silence.matchers) : () => false;
    return {
      silence,
      state: silenceState(silence, options.now),
      openAlerts: open.filter((a) => matches(a.labels)).length,
      until: silence.expiredAt !== null && silence.expiredAt < silence.endsAt ? silence.expiredAt : silence.endsAt,
    };
  });
}

/**
 * The open alerts these matchers would cover, most important first: what a silence would mute if
 * it were made now. Throws `MatcherError` on a regex that does not compile.
 */
export function alertsMatching(store: Store, matchers: readonly LabelMatcher[]): AlertRow[] {
  const matches = compileMatchers(matchers);
  return alertStoreOf(store)
    .open()
    .filter((a) => matches(a.labels));
}
