/** SQL of asynchronous payments (migration 0023): the action's deadline and the attempts that wait on it. */
import type { Queryable } from '../../db/database.js';
import { ATTEMPT_WAITING } from './methods.js';

export const asyncPaymentsRepository = {
  async setDeadline(db: Queryable, paymentId: string, expiresAt: string): Promise<void> {
    await db.query('UPDATE payments SET action_expires_at = $2 WHERE id = $1', [paymentId, expiresAt]);
  },

  /** The attempt the provider issued under its id, through this connection (a notification's subject). */
  async findIssued(db: Queryable, connectionId: string, providerTransactionId: string): Promise<{ id: string; payment_id: string } | undefined> {
    const rows = await db.query<{ id: string; payment_id: string }>(
      `SELECT id, payment_id FROM payment_transactions
        WHERE connection_id = $1 AND provider_transaction_id = $2 AND type = 'PURCHASE' LIMIT 1`,
      [connectionId, providerTransactionId],
    );
    return rows[0];
  },

  /** The payment's attempt that holds the shopper's action, if it is still waiting. */
  async waitingAttempt(db: Queryable, paymentId: string): Promise<{ id: string; provider_transaction_id: string; connection_id: string; provider_id: string } | undefined> {
    const rows = await db.query<{ id: string; provider_transaction_id: string; connection_id: string; provider_id: string }>(
      `SELECT id, provider_transaction_id, connection_id, provider_id FROM payment_transactions
        WHERE payment_id = $1 AND type = 'PURCHASE' AND status = $2 ORDER BY created_at DESC LIMIT 1`,
      [paymentId, ATTEMPT_WAITING],
    );
    return rows[0];
  },

  /** Ends an attempt that waited for the shopper (or one expired here that the provider says was paid after all). */
  async endAttempt(db: Queryable, id: string, status: string, code: string, message: string): Promise<void> {
    await db.query(
      `UPDATE payment_transactions SET status = $2, response_code = $3, response_message = $4, updated_at = clock_timestamp() WHERE id = $1`,
      [id, status, code, message],
    );
  },

  /**
   * Claims up to `limit` payments whose action is past its deadline at `now`, locked for the caller's
   * transaction; rows another worker (or a request) holds are skipped, so two instances never take the same one.
   */
  async claimExpired(db: Queryable, now: Date, limit: number): Promise<string[]> {
    const rows = await db.query<{ id: string }>(
      `SELECT id FROM payments WHERE status = 'PENDING' AND action_expires_at IS NOT NULL AND action_expires_at <= $1
        ORDER BY action_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now.toISOString(), limit],
    );
    return rows.map((r) => r.id);
  },
};
