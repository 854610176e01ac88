/**
 * One copy of what a notification says per event, whatever the channels (migration 017): an
 * event with a megabyte of text routed to three channels stores its body once, each channel's
 * outbox row naming it; after a restart before any delivery, each channel still sends it exactly
 * once, and a row written before the migration (its payload in the row) is still sent. A storm's
 * rows each name their own event's body, and on PostgreSQL they do so without waiting for the
 * body's id (`SqlDialect.lastRowId`). On both state engines.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxStore } from '../../src/notify/outbox-store.js';
import { PostgresDatabase } from '../../src/state/postgres-database.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { finding, Harness, payloadText, slackTo } from './notify-fixture.js';

const MB = 1024 * 1024;
const CHANNELS = ['ops', 'oncall', 'audit'];

let receiver: WebhookReceiver;
let h: Harness | undefined;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver.close();
});

/** The bytes of the outbox's own payloads and of its bodies. */
function stored(harness: Harness): { rowPayloads: number; bodies: number; bodyRows: number } {
  const db = harness.store.db;
  const row = db.prepare('SELECT COALESCE(SUM(LENGTH(payload)), 0) AS n FROM outbox').get() as { n: number | string };
  const body = db.prepare('SELECT COALESCE(SUM(LENGTH(body)), 0) AS n, COUNT(*) AS c FROM outbox_bodies').get() as {
    n: number | string;
    c: number | string;
  };
  return { rowPayloads: Number(row.n), bodies: Number(body.n), bodyRows: Number(body.c) };
}

/** Each outbox row's fingerprint, and the fingerprint in the body it names. */
function rowsAndBodies(harness: Harness): { row: string; body: string }[] {
  return (
    harness.store.db
      .prepare(
        `SELECT o.fingerprint AS row, b.body FROM outbox AS o JOIN outbox_bodies AS b ON b.body_id = o.body_id ORDER BY o.id`,
      )
      .all() as { row: string; body: string }[]
  ).map(({ row, body }) => ({ row, body: (JSON.parse(body) as { fingerprint: string }).fingerprint }));
}

describe.each(STATE_BACKENDS)('notification bodies on $name', (backend) => {
  it("names each event's own body from every row of a storm", () => {
    h = Harness.open({ backend, channels: ['ops', 'oncall'].map((name) => slackTo(name, receiver.url)) });
    const db = h.store.db;
    // Waits of the main thread for PostgreSQL: each sends the writes held before it.
    let waits = 0;
    if (db instanceof PostgresDatabase) {
      const request = db.request.bind(db);
      db.request = (...args) => {
        waits++;
        return request(...args);
      };
    }
    const storm = Array.from({ length: 300 }, (_, i) => finding(`app-${i}`));
    expect(h.cycle('runs', storm).decisions).toEqual({ deliver: 600 });
    const named = rowsAndBodies(h);
    expect(named).toHaveLength(600);
    expect(named.filter((n) => n.row !== n.body)).toEqual([]);
    expect(new Set(named.map((n) => n.row)).size).toBe(300);
    // Not one wait per event for its body's id: the held writes go 256 at a time.
    if (db instanceof PostgresDatabase) expect(waits).toBeLessThan(60);
  });

  it('names a body by its id when the connection stored another since', () => {
    h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
    const rows = new OutboxStore(h.store);
    const row = (fingerprint: string) => ({
      channel: 'ops',
      route: 'default',
      source: 'event' as const,
      eventId: null,
      fingerprint,
      kind: 'firing',
      groupKey: '',
      createdAt: 0,
      status: 'pending' as const,
      decision: 'deliver' as const,
      detail: null,
      heldBy: null,
      dueSince: 0,
      nextAttemptAt: 0,
    });
    h.store.db.transaction(() => {
      const first = rows.insertBody(JSON.stringify({ fingerprint: 'first' }), 0);
      // Another store on the same connection stores the next body.
      const second = new OutboxStore(h!.store).insertBody(JSON.stringify({ fingerprint: 'second' }), 0);
      rows.insert({ ...row('first'), body: first });
      rows.insert({ ...row('second'), body: second });
      rows.insert({ ...row('first'), body: first });
    });
    expect(rowsAndBodies(h).map((n) => `${n.row}:${n.body}`)).toEqual(['first:first', 'second:second', 'first:first']);
  });

  it('stores an event sent to three channels once, and each channel sends it once, across a restart', async () => {
    h = Harness.open({ backend, channels: CHANNELS.map((name) => slackTo(name, receiver.url)) });
    const big = { ...finding('shop'), summary: `Problem shop: ${'r'.repeat(MB)}` };
    expect(h.cycle('runs', [big]).decisions).toEqual({ deliver: 3 });

    const rows = h.store.db.prepare(`SELECT channel, payload, body_id FROM outbox ORDER BY channel`).all() as {
      channel: string;
      payload: string;
      body_id: number | string;
    }[];
    expect(rows.map((r) => r.channel)).toEqual(['audit', 'oncall', 'ops']);
    expect(rows.every((r) => r.payload === '')).toBe(true);
    expect(new Set(rows.map((r) => Number(r.body_id))).size).toBe(1);
    const bytes = stored(h);
    expect(bytes).toMatchObject({ rowPayloads: 0, bodyRows: 1 });
    // One copy: the event's JSON, not three of it.
    expect(bytes.bodies).toBeGreaterThan(MB);
    expect(bytes.bodies).toBeLessThan(1.1 * MB);

    // A crash before any delivery: the rows and their body are on record, and go out once each.
    h = await h.restart();
    await h.notifier.deliverDue();
    expect(receiver.received).toHaveLength(3);
    for (const payload of receiver.received) expect(payloadText(payload)).toContain('Problem shop: rrr');
    await h.notifier.deliverDue();
    expect(receiver.received).toHaveLength(3);
    expect(h.rows().map((r) => `${r.channel}:${r.status}`)).toEqual(['ops:sent', 'oncall:sent', 'audit:sent']);
  });

  it('sends a row written before the bodies, its payload in the row', async () => {
    h = Harness.open({ backend, channels: [slackTo('ops', receiver.url)] });
    h.cycle('runs', [finding('shop')]);
    // As migration 015's daemon wrote it: the event in the row, no body.
    const db = h.store.db;
    db.exec(`UPDATE outbox SET payload = (SELECT body FROM outbox_bodies WHERE outbox_bodies.body_id = outbox.body_id),
               body_id = NULL`);
    db.exec('DELETE FROM outbox_bodies');
    await h.notifier.deliverDue();
    expect(receiver.received).toHaveLength(1);
    expect(payloadText(receiver.received[0])).toContain('Problem shop');
    expect(h.rows().map((r) => r.status)).toEqual(['sent']);
  });
});
