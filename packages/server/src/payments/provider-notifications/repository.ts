/**
 * SQL of provider notifications per connection (migration 0021): the record of each event by (connection,
 * notification id), the parked ones, and the lookups of what an event is about — always through the
 * connection, so never across organizations.
 */
import type { Queryable } from '../../db/database.js';
import type { ConnectorEvent } from '../../providers/connector.js';

export type NotificationState = 'APPLIED' | 'UNCHANGED' | 'IGNORED' | 'PARKED';

/** What a payment transaction found by a notification is: its id and payment. */
export interface Target {
  id: string;
  payment_id: string;
}

export interface ParkedRow {
  notification_id: string;
  event: ConnectorEvent;
}

/** The event without what it carries of the raw body (kept on the chargeback transaction, not here). */
function stored(event: ConnectorEvent): unknown {
  if (event.kind !== 'CHARGEBACK') return event;
  const { raw: _raw, rawBody: _rawBody, ...rest } = event;
  return rest;
}

export const notificationsRepository = {
  /** Records the event's notification; false when (connection, notification id) was seen before. */
  async record(
    db: Queryable,
    n: { connectionId: string; event: ConnectorEvent; state: NotificationState; detail?: string | null; awaitsReference?: string | null; awaitsProviderId?: string | null },
  ): Promise<boolean> {
    const rows = await db.query(
      `INSERT INTO connection_notifications (connection_id, notification_id, kind, state, detail, event, awaits_reference, awaits_provider_id, settled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $4 = 'PARKED' THEN NULL ELSE clock_timestamp() END)
       ON CONFLICT (connection_id, notification_id) DO NOTHING RETURNING notification_id`,
      [
        n.connectionId, n.event.notificationId, n.event.kind, n.state, n.detail ?? null, JSON.stringify(stored(n.event)),
        n.awaitsReference ?? null, n.awaitsProviderId ?? null,
      ],
    );
    return rows.length > 0;
  },

  /** What became of an event recorded in this transaction (or of a parked one, once applied). */
  async settle(db: Queryable, connectionId: string, notificationId: string, state: Exclude<NotificationState, 'PARKED'>, detail: string | null): Promise<void> {
    await db.query(
      `UPDATE connection_notifications SET state = $3, detail = $4, settled_at = clock_timestamp(), awaits_reference = NULL, awaits_provider_id = NULL
        WHERE connection_id = $1 AND notification_id = $2`,
      [connectionId, notificationId, state, detail],
    );
  },

  /** The parked events of the connection waiting for this transaction (our id or the provider's), locked, oldest first. */
  async parkedFor(db: Queryable, connectionId: string, reference: string, providerId: string | null): Promise<ParkedRow[]> {
    return db.query<ParkedRow>(
      `SELECT notification_id, event FROM connection_notifications
        WHERE connection_id = $1 AND state = 'PARKED' AND (awaits_reference = $2 OR ($3::text IS NOT NULL AND awaits_provider_id = $3))
        ORDER BY received_at FOR UPDATE`,
      [connectionId, reference, providerId],
    );
  },

  /** The purchase or authorization the provider knows by this id, made through the connection. */
  async findCharge(db: Queryable, connectionId: string, providerTransactionId: string): Promise<Target | undefined> {
    const rows = await db.query<Target>(
      `SELECT id, payment_id FROM payment_transactions
        WHERE connection_id = $1 AND provider_transaction_id = $2 AND type IN ('PURCHASE', 'AUTHORIZE') AND status = 'SUCCEEDED' LIMIT 1`,
      [connectionId, providerTransactionId],
    );
    return rows[0];
  },

  /** A capture, cancel or refund sent through the connection: by our id (the reference we sent), else by the provider's id. */
  async findFollowUp(db: Queryable, connectionId: string, reference: string | null, providerOperationId: string | null): Promise<Target | undefined> {
    const rows = await db.query<Target>(
      `SELECT id, payment_id FROM payment_transactions
        WHERE connection_id = $1 AND type IN ('CAPTURE', 'CANCEL', 'REFUND')
          AND (id = $2 OR ($3::text IS NOT NULL AND provider_transaction_id = $3))
        ORDER BY (id = $2) DESC LIMIT 1`,
      [connectionId, reference ?? '', providerOperationId],
    );
    return rows[0];
  },

  /**
   * The late approval of this connection the provider knows by this id whose reversal was sent
   * (orchestration/reversals.ts): reversed, or its reversal reported failed. What a reversal's outcome
   * (an Adyen CANCEL_OR_REFUND, a Stripe or Mercado Pago reversal refund) is about: the reversal is no
   * transaction of its own.
   */
  async findReversedLateApproval(db: Queryable, connectionId: string, providerTransactionId: string): Promise<Target | undefined> {
    const rows = await db.query<Target>(
      `SELECT id, payment_id FROM payment_transactions
        WHERE connection_id = $1 AND provider_transaction_id = $2 AND type IN ('PURCHASE', 'AUTHORIZE')
          AND reason IN ('LATE_APPROVAL_REVERSED', 'LATE_APPROVAL_REVERSAL_FAILED') LIMIT 1`,
      [connectionId, providerTransactionId],
    );
    return rows[0];
  },

  /** The purchase or authorization of ours with this id (the reference we sent), made through the connection. */
  async findAttempt(db: Queryable, connectionId: string, reference: string): Promise<Target | undefined> {
    const rows = await db.query<Target>(
      `SELECT id, payment_id FROM payment_transactions
        WHERE id = $2 AND COALESCE(connection_id, connection_data->>'id') = $1 AND type IN ('PURCHASE', 'AUTHORIZE') LIMIT 1`,
      [connectionId, reference],
    );
    return rows[0];
  },

  /** The chargeback the provider knows by this id, received through the connection. */
  async findChargeback(db: Queryable, connectionId: string, chargebackId: string): Promise<Target | undefined> {
    const rows = await db.query<Target>(
      `SELECT id, payment_id FROM payment_transactions WHERE connection_id = $1 AND provider_transaction_id = $2 AND type = 'CHARGEBACK' LIMIT 1`,
      [connectionId, chargebackId],
    );
    return rows[0];
  },

  /** Marks a follow-up the provider accepted and then reported failed: DECLINED, with the provider's word. */
  async markFailed(db: Queryable, id: string, message: string): Promise<void> {
    await db.query(
      `UPDATE payment_transactions SET status = 'DECLINED', response_code = 'FAILED_AT_PROVIDER', response_message = $2, updated_at = clock_timestamp() WHERE id = $1`,
      [id, message],
    );
  },
};
