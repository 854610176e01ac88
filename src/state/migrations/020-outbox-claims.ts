import { defineMigration } from '../migration.js';

/**
 * Who is sending an outbox row, and what a sender knows that it could not record. Among replicas a
 * leader can have a message accepted and then lose PostgreSQL before its "sent" is written (issue
 * 24); the next leader would send it again.
 * - `outbox.claimed_by`: the term (a random name per term of delivery) whose send of the row may
 *   be under way or may have happened; written, fenced, just before the send, cleared with its
 *   recorded outcome. The next leader leaves another term's claimed rows alone for a grace.
 * - `outbox_receipts`: a send the receiver accepted whose record failed, written by the replica
 *   that made it once its connection works again, whether it still leads or not (like `meta`, not
 *   a table of the leader's work); the leader records the row sent from it, if the row is still
 *   pending under that claim, and forgets it.
 */
export default defineMigration(
  20,
  'outbox-claims',
  (d) => `
    ALTER TABLE outbox ADD COLUMN claimed_by TEXT;

    CREATE TABLE outbox_receipts (
      outbox_id  ${d.int64} NOT NULL,
      claimed_by TEXT    NOT NULL,
      sent_at    ${d.int64} NOT NULL,
      PRIMARY KEY (outbox_id, claimed_by)
    )${d.strict};
  `,
);
