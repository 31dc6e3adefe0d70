/**
 * SQL of the transactional outbox. A message is written in the same transaction as the change it
 * announces; workers claim due messages with a lease (locked_until), so a worker that dies mid-delivery
 * only delays the message until the lease ends, and several workers never hold the same message. A
 * message its recipient refused for good is given up (given_up_at), not retried.
 */
import type { Queryable } from '../../db/database.js';

export interface OutboxMessage {
  id: string;
  topic: string;
  payload: unknown;
  /** Delivery attempts so far, this one included. */
  attempts: number;
}

export interface OutboxRow extends OutboxMessage {
  next_attempt_at: string;
  locked_until: string | null;
  delivered_at: string | null;
  given_up_at: string | null;
  last_error: string | null;
}

export const outboxRepository = {
  /**
   * `orderingKey`: messages of one key are delivered one at a time, in the order they were written
   * (created_at, then id); without one a message is delivered as soon as it is due.
   */
  async enqueue(db: Queryable, m: { id: string; topic: string; payload: unknown; orderingKey?: string }): Promise<void> {
    await db.query('INSERT INTO outbox (id, topic, payload, ordering_key) VALUES ($1, $2, $3, $4)', [m.id, m.topic, JSON.stringify(m.payload), m.orderingKey ?? null]);
  },

  /**
   * Takes up to `limit` due messages that no live lease holds and leases them for `leaseMs`, in one
   * statement. SKIP LOCKED lets concurrent workers (other processes) take other messages instead of waiting.
   * A message with an ordering key is taken only when no older message of its key is undelivered (leased,
   * backing off after a failure, or not due yet): so a dispute's evidence batches reach the provider in the
   * order they were submitted even when an earlier one's delivery failed and it waits for its next attempt.
   */
  async claim(db: Queryable, limit: number, leaseMs: number): Promise<OutboxMessage[]> {
    // RETURNING does not keep the subquery's order; the outer SELECT restores it (due first, oldest first).
    return db.query<OutboxMessage>(
      `WITH claimed AS (
         UPDATE outbox SET locked_until = clock_timestamp() + $2 * interval '1 millisecond', attempts = attempts + 1
          WHERE id IN (
            SELECT id FROM outbox o
             WHERE delivered_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= clock_timestamp()
               AND (locked_until IS NULL OR locked_until <= clock_timestamp())
               AND (ordering_key IS NULL OR NOT EXISTS (
                     SELECT 1 FROM outbox older
                      WHERE older.ordering_key = o.ordering_key AND older.delivered_at IS NULL AND older.given_up_at IS NULL
                        AND (older.created_at, older.id) < (o.created_at, o.id)))
             ORDER BY next_attempt_at, created_at
             LIMIT $1
             FOR UPDATE SKIP LOCKED)
          RETURNING id, topic, payload, attempts, next_attempt_at, created_at)
       SELECT id, topic, payload, attempts FROM claimed ORDER BY next_attempt_at, created_at`,
      [limit, leaseMs],
    );
  },

  async acknowledge(db: Queryable, id: string): Promise<void> {
    await db.query('UPDATE outbox SET delivered_at = clock_timestamp(), locked_until = NULL, last_error = NULL WHERE id = $1 AND delivered_at IS NULL', [
      id,
    ]);
  },

  /** Releases the lease and schedules the next attempt after `delayMs`. */
  async retryLater(db: Queryable, id: string, error: string, delayMs: number): Promise<void> {
    await db.query(
      `UPDATE outbox SET locked_until = NULL, last_error = $2, next_attempt_at = clock_timestamp() + $3 * interval '1 millisecond'
        WHERE id = $1 AND delivered_at IS NULL`,
      [id, error.slice(0, 1000), delayMs],
    );
  },

  /** The recipient refused the message for good: never claimed again (the reason kept in last_error). */
  async giveUp(db: Queryable, id: string, error: string): Promise<void> {
    await db.query('UPDATE outbox SET given_up_at = clock_timestamp(), locked_until = NULL, last_error = $2 WHERE id = $1 AND delivered_at IS NULL', [id, error.slice(0, 1000)]);
  },

  async find(db: Queryable, id: string): Promise<OutboxRow | undefined> {
    const rows = await db.query<OutboxRow>(
      'SELECT id, topic, payload, attempts, next_attempt_at, locked_until, delivered_at, given_up_at, last_error FROM outbox WHERE id = $1',
      [id],
    );
    return rows[0];
  },
};
