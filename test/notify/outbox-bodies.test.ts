/**
 * One copy of what a notification says per event, whatever the channels (migration 017): an
 * event with a megabyte of text routed to three channels stores its body once, each channel's
 * outbox row naming it; after a restart before any delivery, each channel still sends it exactly
 * once, and a row written before the migration (its payload in the row) is still sent. On both
 * state engines.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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

describe.each(STATE_BACKENDS)('notification bodies on $name', (backend) => {
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
