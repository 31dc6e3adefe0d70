/**
 * SQL over the copies other domains keep of a vaulted method, for shredding only (vault/shred.ts): the
 * event log (webhook_events; pending deliveries read their payload from it), payments and their
 * transactions, and stored idempotent replies. Plain SQL here rather than imports from those domains:
 * payments and webhooks depend on the vault, not the other way round.
 */
import type { Queryable } from '../db/database.js';

export interface StoredEvent {
  id: string;
  data: unknown;
}

export interface StoredPayment {
  id: string;
  payment_method: unknown;
}

export const vaultCopiesRepository = {
  /** The organization's events about these resources (vaulted tokens or payment ids), locked. */
  async eventsOf(db: Queryable, organizationId: string, resourceIds: readonly string[]): Promise<(StoredEvent & { type: string; resource_id: string })[]> {
    if (resourceIds.length === 0) return [];
    return db.query(
      'SELECT id, type, resource_id, data FROM webhook_events WHERE organization_id = $1 AND resource_id = ANY($2::text[]) ORDER BY seq FOR UPDATE',
      [organizationId, resourceIds],
    );
  },

  async replaceEventData(db: Queryable, id: string, data: unknown): Promise<void> {
    await db.query('UPDATE webhook_events SET data = $2::jsonb WHERE id = $1', [id, JSON.stringify(data)]);
  },

  /** The customer's payments (by the customer index), locked: their method snapshots. */
  async paymentsOfCustomer(db: Queryable, organizationId: string, customerId: string): Promise<StoredPayment[]> {
    return db.query('SELECT id, payment_method FROM payments WHERE organization_id = $1 AND customer_id = $2 ORDER BY created_at, id FOR UPDATE', [
      organizationId,
      customerId,
    ]);
  },

  async replacePaymentMethod(db: Queryable, paymentId: string, paymentMethod: unknown): Promise<void> {
    await db.query('UPDATE payments SET payment_method = $2::json WHERE id = $1', [paymentId, JSON.stringify(paymentMethod)]);
  },

  async transactionsOf(db: Queryable, paymentIds: readonly string[]): Promise<StoredPayment[]> {
    if (paymentIds.length === 0) return [];
    return db.query('SELECT id, payment_method FROM payment_transactions WHERE payment_id = ANY($1::text[]) ORDER BY seq FOR UPDATE', [paymentIds]);
  },

  async replaceTransactionMethod(db: Queryable, transactionId: string, paymentMethod: unknown): Promise<void> {
    await db.query('UPDATE payment_transactions SET payment_method = $2::json WHERE id = $1', [transactionId, JSON.stringify(paymentMethod)]);
  },

  /** The organization's stored idempotent replies that mention one of `needles` (tokens, payment ids), locked. */
  async repliesMentioning(db: Queryable, organizationId: string, needles: readonly string[]): Promise<{ idempotency_key: string; response_body: unknown }[]> {
    if (needles.length === 0) return [];
    return db.query(
      `SELECT idempotency_key, response_body FROM idempotency_keys
        WHERE organization_id = $1 AND response_body IS NOT NULL
          AND response_body::text LIKE ANY (SELECT '%' || n || '%' FROM unnest($2::text[]) n)
        FOR UPDATE`,
      [organizationId, needles],
    );
  },

  async replaceReply(db: Queryable, organizationId: string, key: string, body: unknown): Promise<void> {
    await db.query('UPDATE idempotency_keys SET response_body = $3::jsonb WHERE organization_id = $1 AND idempotency_key = $2', [
      organizationId,
      key,
      JSON.stringify(body),
    ]);
  },
};
