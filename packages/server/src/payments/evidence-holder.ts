/**
 * Where a dispute's evidence goes: the provider and connection that hold the chargeback. A chargeback
 * notified per connection names its connection; one without (the sandbox acquirer's own test-card
 * chargebacks) is held by whoever approved the charge, so the payment's approved PURCHASE / AUTHORIZE
 * names them. Read outside any transaction: the outbox calls the provider right after.
 */
import type { Queryable } from '../db/database.js';

export interface EvidenceHolder {
  organizationId: string;
  /** null: the payment names no provider (made before providers were recorded): the default provider. */
  providerId: string | null;
  connectionId: string | null;
}

interface Row {
  organization_id: string;
  cb_provider: string | null;
  cb_connection: string | null;
  ch_provider: string | null;
  ch_connection: string | null;
}

export async function evidenceHolder(db: Queryable, paymentId: string, chargebackTransactionId: string): Promise<EvidenceHolder | undefined> {
  const rows = await db.query<Row>(
    `SELECT p.organization_id, cb.provider_id AS cb_provider, cb.connection_id AS cb_connection,
            ch.provider_id AS ch_provider, ch.connection_id AS ch_connection
       FROM payments p
       LEFT JOIN payment_transactions cb ON cb.id = $2 AND cb.payment_id = p.id
       LEFT JOIN LATERAL (
         SELECT provider_id, connection_id FROM payment_transactions
          WHERE payment_id = p.id AND type IN ('PURCHASE', 'AUTHORIZE') AND status = 'SUCCEEDED'
          ORDER BY seq LIMIT 1
       ) ch ON true
      WHERE p.id = $1`,
    [paymentId, chargebackTransactionId],
  );
  const r = rows[0];
  if (!r) return undefined;
  if (r.cb_connection) return { organizationId: r.organization_id, providerId: r.cb_provider, connectionId: r.cb_connection };
  return { organizationId: r.organization_id, providerId: r.ch_provider, connectionId: r.ch_connection };
}
