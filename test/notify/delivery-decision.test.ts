import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AlertEventKind } from '../../src/alerts/alert-event.js';
import { FOLDED_REASON } from '../../src/alerts/decide.js';
import {
  decideDelivery,
  type DecisionFacts,
  type NotificationLogEntry,
  type NotifyDecision,
  STATUS_OF_DECISION,
} from '../../src/notify/delivery-decision.js';
import type { ResolvedRoute } from '../../src/notify/router.js';

const HOUR = 3600_000;
const NOW = Date.UTC(2026, 10, 2, 12);
const route = (over: Partial<ResolvedRoute> = {}): ResolvedRoute => ({
  name: 'r',
  channels: ['ops'],
  repeatIntervalMs: 4 * HOUR,
  sendResolved: true,
  sendAcknowledged: undefined,
  muteWindows: [],
  groupBy: ['check'],
  escalation: undefined,
  ...over,
});
const told = (lastKind: AlertEventKind, hoursAgo: number): NotificationLogEntry => ({
  lastKind,
  announcedAt: NOW - hoursAgo * HOUR,
});
const muted = { name: 'night', isActive: () => true };
/** A context being read for `seconds` of a 30 s wait. */
const reading = (seconds: number) => ({ since: NOW - seconds * 1000, waitMs: 30_000 });
/** An attention alert closed because an alert of ours reports its record now. */
const folded = { kind: 'resolved' as const, fingerprint: 'f', labels: { check: 'attention' }, reason: FOLDED_REASON };
const cause = { rule: 'bad_servers' as const, fingerprint: 'servers/s1', summary: 'Server s1 is in state error' };

function facts(kind: AlertEventKind, over: Partial<DecisionFacts> = {}): DecisionFacts {
  return {
    event: { kind, fingerprint: 'f', labels: { check: 'failed_runs' } },
    route: route(),
    now: NOW,
    silenceId: undefined,
    cause: undefined,
    log: undefined,
    ...over,
  };
}

describe('decideDelivery', () => {
  it.each<[string, DecisionFacts, NotifyDecision]>([
    ['a new firing', facts('firing'), 'deliver'],
    ['a silenced firing', facts('firing', { silenceId: 'abc' }), 'silenced'],
    ['a firing in a mute window', facts('firing', { route: route({ muteWindows: [muted] }) }), 'muted_window'],
    ['a firing under a bad server', facts('firing', { cause }), 'inhibited'],
    [
      'silence beats mute window and inhibition',
      facts('firing', { silenceId: 'abc', cause, route: route({ muteWindows: [muted] }) }),
      'silenced',
    ],
    ['a repeat before the route interval', facts('repeat', { log: told('firing', 1) }), 'repeat_waiting'],
    [
      'a repeat on a route that never repeats',
      facts('repeat', { log: told('firing', 1), route: route({ repeatIntervalMs: Infinity }) }),
      'repeat_not_due',
    ],
    ['a new firing the channel would take for a repeat', facts('firing', { log: told('repeat', 1) }), 'repeat_not_due'],
    ['a repeat after the route interval', facts('repeat', { log: told('firing', 4) }), 'deliver'],
    ['a repeat the channel never heard the firing of', facts('repeat', { log: undefined }), 'deliver'],
    ['an escalation is never "not due"', facts('escalated', { log: told('firing', 0) }), 'deliver'],
    ['a resolve of an announced alert', facts('resolved', { log: told('firing', 1) }), 'deliver'],
    [
      'a resolve folded into another alert, on a channel that pages',
      facts('resolved', { log: told('firing', 1), event: { ...folded } }),
      'folded',
    ],
    [
      'a resolve folded into another alert, on a channel keeping a message per alert',
      facts('resolved', { log: told('firing', 1), event: { ...folded }, showsAcknowledgements: true }),
      'deliver',
    ],
    [
      'a folded resolve the channel never heard the firing of',
      facts('resolved', { log: undefined, event: { ...folded } }),
      'resolved_quietly',
    ],
    ['a resolve never announced', facts('resolved', { log: undefined }), 'resolved_quietly'],
    ['a resolve after a resolve', facts('resolved', { log: told('resolved', 1) }), 'resolved_quietly'],
    [
      'a resolve with send_resolved false',
      facts('resolved', { log: told('firing', 1), route: route({ sendResolved: false }) }),
      'resolved_not_sent',
    ],
    ['a resolve held by its cause', facts('resolved', { log: told('firing', 1), cause }), 'inhibited'],
    ...(['firing', 'repeat', 'escalated', 'resolved'] as const).map((kind): [string, DecisionFacts, NotifyDecision] => [
      `a ${kind} of an alert for the digest alone, even silenced or held`,
      facts(kind, {
        event: { kind, fingerprint: 'f', labels: { check: 'branches', delivery: 'digest' } },
        silenceId: 'abc',
        cause,
      }),
      'digest_only',
    ]),
    ...(['acknowledged', 'unacknowledged'] as const).flatMap((kind): [string, DecisionFacts, NotifyDecision][] => [
      [
        `${kind}, on a channel whose kind shows acknowledgements`,
        facts(kind, { log: told('firing', 1), showsAcknowledgements: true }),
        'deliver',
      ],
      [
        `${kind}, on a channel (email, webhook, log) that does not`,
        facts(kind, { log: told('firing', 1) }),
        'acknowledgement_not_sent',
      ],
      [
        `${kind}, a route with send_acknowledged: true on a channel that does not`,
        facts(kind, { log: told('firing', 1), route: route({ sendAcknowledged: true }) }),
        'deliver',
      ],
      [
        `${kind}, a route with send_acknowledged: false on a channel that does`,
        facts(kind, { log: told('firing', 1), showsAcknowledgements: true, route: route({ sendAcknowledged: false }) }),
        'acknowledgement_not_sent',
      ],
      [
        `${kind} of an alert the channel was never told of`,
        facts(kind, { showsAcknowledgements: true }),
        'acknowledged_quietly',
      ],
      [
        `${kind} that came from this channel's tool (its webhook)`,
        facts(kind, {
          event: { kind, fingerprint: 'f', labels: { check: 'failed_runs' }, acknowledgement: { channel: 'pd' } },
          channel: 'pd',
          log: told('firing', 1),
          showsAcknowledgements: true,
        }),
        'acknowledged_there',
      ],
      [
        `${kind} that came from another channel's tool`,
        facts(kind, {
          event: { kind, fingerprint: 'f', labels: { check: 'failed_runs' }, acknowledgement: { channel: 'og' } },
          channel: 'pd',
          log: told('firing', 1),
          showsAcknowledgements: true,
        }),
        'deliver',
      ],
      [
        `${kind} of an alert silenced now`,
        facts(kind, { log: told('firing', 1), showsAcknowledgements: true, silenceId: 'abc' }),
        'silenced',
      ],
      [
        `${kind} of an alert just repeated: never "not due"`,
        facts(kind, { log: told('repeat', 0), showsAcknowledgements: true }),
        'deliver',
      ],
    ]),
    [
      'a firing whose context is being read, within the wait',
      facts('firing', { contextPending: reading(29) }),
      'awaiting_context',
    ],
    [
      'an escalation whose context is being read',
      facts('escalated', { contextPending: reading(0) }),
      'awaiting_context',
    ],
    [
      'a firing whose context was not read within the wait',
      facts('firing', { contextPending: reading(30) }),
      'context_wait_over',
    ],
    [
      'a repeat never waits for a context',
      facts('repeat', { log: told('firing', 4), contextPending: reading(0) }),
      'deliver',
    ],
    [
      'a resolve never waits for a context',
      facts('resolved', { log: told('firing', 1), contextPending: reading(0) }),
      'deliver',
    ],
    [
      'a silence holds before the context is waited for',
      facts('firing', { silenceId: 'abc', contextPending: reading(0) }),
      'silenced',
    ],
    [
      'inhibition holds before the context is waited for',
      facts('firing', { cause, contextPending: reading(0) }),
      'inhibited',
    ],
  ])('%s → %s', (_name, f, expected) => {
    expect(decideDelivery(f).decision).toBe(expected);
  });

  it.each<[string, Partial<DecisionFacts>, string]>([
    ['the route refuses', { route: route({ sendAcknowledged: false }) }, 'route r has send_acknowledged: false'],
    [
      'the channel does not show them',
      {},
      'the channel does not show acknowledgements unless route r has send_acknowledged: true',
    ],
  ])('names why an acknowledgement is not sent: %s', (_name, over, detail) => {
    expect(decideDelivery(facts('acknowledged', { log: told('firing', 1), ...over })).detail).toBe(detail);
  });

  it('names the detail: the silence, the window, the cause', () => {
    expect(decideDelivery(facts('firing', { silenceId: 'abc' })).detail).toBe('silence abc');
    expect(decideDelivery(facts('firing', { route: route({ muteWindows: [muted] }) })).detail).toBe(
      'mute window night',
    );
    expect(decideDelivery(facts('firing', { cause })).detail).toBe('bad_servers: Server s1 is in state error');
    expect(decideDelivery(facts('firing', { contextPending: reading(30) })).detail).toBe(
      'its context was not read within 30000 ms',
    );
  });
});

describe('the outcomes of deploy_watchdog_notifications_total', () => {
  it('are named in the README as /metrics writes them, so a query on one finds it', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const row = readme.split('\n').find((l) => l.includes('| `deploy_watchdog_notifications_total` |'))!;
    const named = [...row.split('|')[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    // What delivery.ts counts, then every decision of the outbox but `deliver` (which delivery counts).
    const written = ['sent', 'retry', 'failed', 'expired', 'partial', 'unconfirmed'];
    written.push(...Object.keys(STATUS_OF_DECISION).filter((d) => d !== 'deliver'));
    expect(named.length).toBeGreaterThan(6);
    expect(named.filter((o) => !written.includes(o!))).toEqual([]);
  });
});
