/**
 * SQL of the retention job: each call removes at most `limit` expired rows in the caller's transaction.
 * Rows are claimed with FOR UPDATE SKIP LOCKED, so instances running the job at once take different rows
 * and never wait on each other or on a request holding one of them.
 */
import type { Queryable } from '../db/database.js';

export const retentionRepository = {
  /** Idempotency records whose expires_at has passed (docs/design.md §4: kept 24 hours). */
  async purgeIdempotencyKeys(db: Queryable, limit: number): Promise<number> {
    const rows = await db.query(
      `DELETE FROM idempotency_keys k USING (
         SELECT organization_id, idempotency_key FROM idempotency_keys
          WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED) old
        WHERE k.organization_id = old.organization_id AND k.idempotency_key = old.idempotency_key
        RETURNING 1`,
      [limit],
    );
    return rows.length;
  },

  /** Events created before `before`, with their deliveries and delivery attempts (which reference them). */
  async purgeEvents(db: Queryable, before: string, limit: number): Promise<number> {
    const events = await db.query<{ id: string }>(
      'SELECT id FROM webhook_events WHERE created_at < $1::timestamptz ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED',
      [before, limit],
    );
    if (events.length === 0) return 0;
    const ids = events.map((e) => e.id);
    await db.query(
      `DELETE FROM webhook_delivery_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id = ANY($1::text[]))`,
      [ids],
    );
    await db.query('DELETE FROM webhook_deliveries WHERE event_id = ANY($1::text[])', [ids]);
    await db.query('DELETE FROM webhook_events WHERE id = ANY($1::text[])', [ids]);
    return ids.length;
  },
};
