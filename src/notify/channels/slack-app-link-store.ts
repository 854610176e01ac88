/**
 * Where each living message of the Slack app channel is, and what it shows (migration 010): the
 * link between an alert group and its one message in Slack, kept in the state so that a restart
 * never loses it and never posts a second one. Row ⇄ object mapping lives here and nowhere else;
 * what to post, update or adopt is decided in `slack-app-sender.ts`.
 *
 * Discord's living messages are kept here too (`discord-living.ts`): one concept, one table. There
 * `slackChannel` holds the webhook's id and `ts` the message's id (neither a credential: the
 * webhook's token is never stored).
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import type { SqlDatabase } from '../../state/sql-database.js';
import type { Store } from '../../state/store.js';
import { camelRow } from '../../state/camel-row.js';
import type { LivingState } from './slack-app-render.js';

/** Where a living message is in its life. */
export type LivingStatus = 'posting' | 'open' | 'closed';

/**
 * One living message as the code sees it (times in ms since the epoch): where it is, and what it
 * shows (its group, read from `groupKey`, the latest event delivered of each alert, its notes and
 * its routes).
 */
export interface LivingMessage extends LivingState {
  id: number;
  /** The channel's name in `notify.channels`. */
  channel: string;
  /** The alert group it is about: JSON of the group's label values (`AlertsNotification.group`). */
  groupKey: string;
  status: LivingStatus;
  /** Carried in the message's metadata: how it is found in Slack after a crash before its `ts` was kept. */
  token: string;
  /** The Slack channel ID it was posted to. */
  slackChannel: string;
  /** Slack's id of the message; null while `posting`. */
  ts: string | null;
  createdAt: number;
}

/** A living message as read: its columns by their SQL names. */
type DbRow = Record<string, unknown>;

/** Notes a message keeps; older ones are still in its thread. */
export const MAX_NOTES = 5;

/** The statements of {@link SlackAppLinkStore}, prepared once per open store. */
function prepareLinks(db: SqlDatabase) {
  return {
    living: db.prepare<[string, string], DbRow>(
      `SELECT * FROM slack_app_messages WHERE channel = ? AND group_key = ? AND status <> 'closed'`,
    ),
    forAlert: db.prepare<[string, string], DbRow>(
      `SELECT m.* FROM slack_app_messages m JOIN slack_app_message_alerts a ON a.message_id = m.id
       WHERE m.channel = ? AND a.fingerprint = ? AND m.status <> 'posting' ORDER BY m.id DESC LIMIT 1`,
    ),
    byMessage: db.prepare<[string, string], DbRow>(
      `SELECT * FROM slack_app_messages WHERE slack_channel = ? AND ts = ? ORDER BY id DESC LIMIT 1`,
    ),
    alerts: db.prepare<[number], { event: string }>(
      'SELECT event FROM slack_app_message_alerts WHERE message_id = ? ORDER BY fingerprint',
    ),
    insert: db.prepare<{ channel: string; groupKey: string; token: string; slackChannel: string; now: number }, DbRow>(
      `INSERT INTO slack_app_messages (channel, group_key, status, token, slack_channel, created_at, updated_at)
       VALUES (@channel, @groupKey, 'posting', @token, @slackChannel, @now, @now) RETURNING *`,
    ),
    posted: db.prepare<{ id: number; slackChannel: string; ts: string; now: number }>(
      `UPDATE slack_app_messages SET status = 'open', slack_channel = @slackChannel, ts = @ts, updated_at = @now
       WHERE id = @id`,
    ),
    saveMessage: db.prepare<{ id: number; notes: string; routes: string; now: number }>(
      'UPDATE slack_app_messages SET notes = @notes, routes = @routes, updated_at = @now WHERE id = @id',
    ),
    clearAlerts: db.prepare<[number]>('DELETE FROM slack_app_message_alerts WHERE message_id = ?'),
    putAlert: db.prepare<[number, string, string]>(
      'INSERT INTO slack_app_message_alerts (message_id, fingerprint, event) VALUES (?, ?, ?)',
    ),
    forget: db.prepare<[number]>(`DELETE FROM slack_app_messages WHERE id = ? AND status = 'posting'`),
    close: db.prepare<{ id: number; reason: string; now: number }>(
      `UPDATE slack_app_messages SET status = 'closed', closed_at = @now, closed_reason = @reason, updated_at = @now
       WHERE id = @id AND status <> 'closed'`,
    ),
  };
}

/** The prepared statements of the living messages' tables for one open store. */
export class SlackAppLinkStore {
  readonly #store: Store;
  readonly #q: ReturnType<typeof prepareLinks>;

  constructor(store: Store) {
    this.#store = store;
    this.#q = prepareLinks(store.db);
  }

  /** The living message (posting or open) of an alert group on a channel, if any. */
  living(channel: string, groupKey: string): LivingMessage | undefined {
    return this.#read(this.#q.living.get(channel, groupKey));
  }

  /**
   * The newest message on a channel that shows an alert, open or closed (a remediation's outcome
   * often comes after the alert resolved: it is said in the thread all the same), if any.
   */
  forAlert(channel: string, fingerprint: string): LivingMessage | undefined {
    return this.#read(this.#q.forAlert.get(channel, fingerprint));
  }

  /** The message Slack knows as (channel ID, ts), whatever its status, if it is one of ours. */
  byMessage(slackChannel: string, ts: string): LivingMessage | undefined {
    return this.#read(this.#q.byMessage.get(slackChannel, ts));
  }

  /**
   * Records the intent to post a group's living message, committed before it is posted: after a
   * crash between the post and {@link posted}, it says a message may exist, and its token finds it.
   */
  intend(channel: string, groupKey: string, slackChannel: string, token: string, now: number): LivingMessage {
    // Each write in a transaction: among replicas a fenced one, so a deposed leader records no intent (and posts nothing after it).
    const row = this.#store.transaction(() => this.#q.insert.get({ channel, groupKey, token, slackChannel, now }));
    return this.#read(row)!;
  }

  /** The message was posted (or found after a crash): where it is. */
  posted(id: number, slackChannel: string, ts: string, now: number): void {
    this.#store.transaction(() => this.#q.posted.run({ id, slackChannel, ts, now }));
  }

  /** What the message now shows: the latest event of each alert, its notes and routes. */
  save(id: number, shown: Omit<LivingState, 'group'>, now: number): void {
    this.#store.transaction(() => {
      this.#q.saveMessage.run({
        id,
        notes: JSON.stringify(shown.notes.slice(-MAX_NOTES)),
        routes: JSON.stringify([...new Set(shown.routes)]),
        now,
      });
      this.#q.clearAlerts.run(id);
      for (const e of shown.alerts) this.#q.putAlert.run(id, e.fingerprint, JSON.stringify(e));
    });
  }

  /** Drops an intent whose post Slack refused: no message can exist, so none is to be found after a restart. */
  forget(id: number): void {
    this.#store.transaction(() => this.#q.forget.run(id));
  }

  /** The message lives no more (every alert in it resolved, or it was replaced): the group's next event starts a new one. */
  close(id: number, reason: string, now: number): void {
    this.#store.transaction(() => this.#q.close.run({ id, reason, now }));
  }

  #read(row: DbRow | undefined): LivingMessage | undefined {
    if (!row) return undefined;
    const { updated_at: _updated, closed_at: _closed, closed_reason: _reason, ...columns } = row;
    const alerts = this.#q.alerts.all(row.id as number).map((r) => JSON.parse(r.event) as AlertEvent);
    const fields = camelRow<Omit<LivingMessage, 'alerts' | 'group'>>(columns, { json: ['notes', 'routes'] });
    return { ...fields, group: JSON.parse(fields.groupKey) as Record<string, string>, alerts };
  }
}
