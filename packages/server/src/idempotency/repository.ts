import type { Queryable } from '../db/database.js';

export interface StoredReply {
  fingerprint: string;
  status_code: number;
  response_headers: Record<string, string>;
  response_body: unknown;
}

export const idempotencyRepository = {
  /** Takes the per-(organization, key) transaction lock; false when another transaction holds it. */
  async tryLock(tx: Queryable, organizationId: string, key: string): Promise<boolean> {
    const rows = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked', [
      `idempotency:${organizationId}:${key}`,
    ]);
    return rows[0]?.locked === true;
  },

  async findLive(tx: Queryable, organizationId: string, key: string): Promise<StoredReply | undefined> {
    const rows = await tx.query<StoredReply>(
      `SELECT fingerprint, status_code, response_headers, response_body FROM idempotency_keys
        WHERE organization_id = $1 AND idempotency_key = $2 AND expires_at > clock_timestamp()`,
      [organizationId, key],
    );
    return rows[0];
  },

  /** Stores the reply; replaces an expired row of the same key. */
  async save(
    tx: Queryable,
    row: { organizationId: string; key: string; fingerprint: string; operationId: string; status: number; headers: Record<string, string>; body: unknown; ttlSeconds: number },
  ): Promise<void> {
    await tx.query(
      `INSERT INTO idempotency_keys (organization_id, idempotency_key, fingerprint, operation_id, status_code, response_headers, response_body, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp() + make_interval(secs => $8))
       ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, operation_id = EXCLUDED.operation_id, status_code = EXCLUDED.status_code,
         response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body,
         created_at = clock_timestamp(), expires_at = EXCLUDED.expires_at`,
      [row.organizationId, row.key, row.fingerprint, row.operationId, row.status, JSON.stringify(row.headers), row.body === undefined ? null : JSON.stringify(row.body), row.ttlSeconds],
    );
  },

  async purgeExpired(db: Queryable): Promise<number> {
    const rows = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= clock_timestamp() RETURNING 1');
    return rows.length;
  },
};
