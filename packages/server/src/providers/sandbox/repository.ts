import type { Queryable } from '../../db/database.js';
import type { SealedValue } from '../../keyring/secret-box.js';

/** A provider_secrets row: sealed, or (written before migration 0007) in clear until the next start seals it. */
export interface ProviderSecretRow {
  secret: string | null;
  ciphertext: Uint8Array | null;
  iv: Uint8Array | null;
  tag: Uint8Array | null;
  key_id: string | null;
}

const sealedParams = (s: SealedValue) => [s.keyId, Buffer.from(s.ciphertext), Buffer.from(s.iv), Buffer.from(s.tag)];

/** The sandbox provider's own tables (its side of the wire): signing secret, received evidence. */
export const sandboxRepository = {
  /** Stores a sealed secret for the provider unless it has one (race-safe). */
  async insertSecret(db: Queryable, providerId: string, sealed: SealedValue): Promise<void> {
    await db.query(
      'INSERT INTO provider_secrets (provider_id, key_id, ciphertext, iv, tag) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider_id) DO NOTHING',
      [providerId, ...sealedParams(sealed)],
    );
  },

  /** The provider's secret row, locked for the rest of the transaction. */
  async lockSecret(db: Queryable, providerId: string): Promise<ProviderSecretRow | undefined> {
    const rows = await db.query<ProviderSecretRow>('SELECT secret, ciphertext, iv, tag, key_id FROM provider_secrets WHERE provider_id = $1 FOR UPDATE', [
      providerId,
    ]);
    return rows[0];
  },

  /** Replaces the row's secret by `sealed` and drops any clear copy. */
  async resealSecret(db: Queryable, providerId: string, sealed: SealedValue): Promise<void> {
    await db.query('UPDATE provider_secrets SET secret = NULL, key_id = $2, ciphertext = $3, iv = $4, tag = $5 WHERE provider_id = $1', [
      providerId,
      ...sealedParams(sealed),
    ]);
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
