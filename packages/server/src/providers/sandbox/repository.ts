import type { Queryable } from '../../db/database.js';

/** The sandbox provider's own tables (its side of the wire): signing secret, received evidence. */
export const sandboxRepository = {
  /** The stored secret of the provider, storing `candidate` first if there is none (race-safe). */
  async ensureSecret(db: Queryable, providerId: string, candidate: string): Promise<string> {
    await db.query('INSERT INTO provider_secrets (provider_id, secret) VALUES ($1, $2) ON CONFLICT (provider_id) DO NOTHING', [providerId, candidate]);
    const rows = await db.query<{ secret: string }>('SELECT secret FROM provider_secrets WHERE provider_id = $1', [providerId]);
    return rows[0]!.secret;
  },

  /** Records a forward by its reference; a repeated reference only counts the delivery. */
  async recordForward(
    db: Queryable,
    f: { reference: string; providerDisputeId: string; paymentId: string; chargebackId: string | null; documents: unknown[] },
  ): Promise<{ providerDisputeId: string; deliveries: number }> {
    const rows = await db.query<{ provider_dispute_id: string; deliveries: number }>(
      `INSERT INTO sandbox_evidence_forwards (reference, provider_dispute_id, payment_id, chargeback_id, documents)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (reference) DO UPDATE SET deliveries = sandbox_evidence_forwards.deliveries + 1, last_delivery_at = clock_timestamp()
       RETURNING provider_dispute_id, deliveries`,
      [f.reference, f.providerDisputeId, f.paymentId, f.chargebackId, JSON.stringify(f.documents)],
    );
    return { providerDisputeId: rows[0]!.provider_dispute_id, deliveries: rows[0]!.deliveries };
  },
};
