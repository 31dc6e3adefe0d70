import type { Queryable } from '../db/database.js';

/** A live record: a stored reply (COMPLETE), or a deferred operation's claim (PENDING, no reply yet). */
export interface StoredRecord {
  fingerprint: string;
  operation_id: string;
  state: 'COMPLETE' | 'PENDING';
  status_code: number | null;
  response_headers: Record<string, string>;
  response_body: unknown;
  /** What a PENDING claim is bound to ('payment:<id>'), or null before the operation wrote anything. */
  resource: string | null;
  claim_id: string | null;
  /** Seconds since the claim was made or taken over (PENDING only). */
  claim_age_seconds: number | null;
}

/** A stored reply (COMPLETE record). */
export type StoredReply = StoredRecord & { state: 'COMPLETE'; status_code: number };

export interface ReplyToStore {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

const bodyParam = (body: unknown) => (body === undefined ? null : JSON.stringify(body));

/** The name of a key's transaction lock (pg_try_advisory_xact_lock), the same in every statement that takes it. */
const lockName = (organizationId: string, key: string) => `idempotency:${organizationId}:${key}`;

export const idempotencyRepository = {
  /** Takes the per-(organization, key) transaction lock; false when another transaction holds it. */
  async tryLock(tx: Queryable, organizationId: string, key: string): Promise<boolean> {
    const rows = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked', [lockName(organizationId, key)]);
    return rows[0]?.locked === true;
  },

  async findLive(tx: Queryable, organizationId: string, key: string): Promise<StoredRecord | undefined> {
    const rows = await tx.query<StoredRecord>(
      `SELECT fingerprint, operation_id, state, status_code, response_headers, response_body, resource, claim_id,
              extract(epoch FROM clock_timestamp() - claimed_at)::float8 AS claim_age_seconds
         FROM idempotency_keys
        WHERE organization_id = $1 AND idempotency_key = $2 AND expires_at > clock_timestamp()`,
      [organizationId, key],
    );
    return rows[0];
  },

  /** Stores the reply (atomic mode); replaces an expired row of the same key. */
  async save(
    tx: Queryable,
    row: { organizationId: string; key: string; fingerprint: string; operationId: string; status: number; headers: Record<string, string>; body: unknown; ttlSeconds: number },
  ): Promise<void> {
    await tx.query(
      `INSERT INTO idempotency_keys (organization_id, idempotency_key, fingerprint, operation_id, state, status_code, response_headers, response_body, expires_at)
       VALUES ($1, $2, $3, $4, 'COMPLETE', $5, $6, $7, clock_timestamp() + make_interval(secs => $8))
       ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, operation_id = EXCLUDED.operation_id, state = 'COMPLETE', status_code = EXCLUDED.status_code,
         response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body,
         resource = NULL, claim_id = NULL, claimed_at = NULL,
         created_at = clock_timestamp(), expires_at = EXCLUDED.expires_at`,
      [row.organizationId, row.key, row.fingerprint, row.operationId, row.status, JSON.stringify(row.headers), bodyParam(row.body), row.ttlSeconds],
    );
  },

  /** Claims the key for a deferred operation: a PENDING record without reply; replaces an expired row of the same key. */
  async claim(
    tx: Queryable,
    row: { organizationId: string; key: string; fingerprint: string; operationId: string; claimId: string; ttlSeconds: number },
  ): Promise<void> {
    await tx.query(
      `INSERT INTO idempotency_keys (organization_id, idempotency_key, fingerprint, operation_id, state, status_code, resource, claim_id, claimed_at, expires_at)
       VALUES ($1, $2, $3, $4, 'PENDING', NULL, NULL, $5, clock_timestamp(), clock_timestamp() + make_interval(secs => $6))
       ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, operation_id = EXCLUDED.operation_id, state = 'PENDING', status_code = NULL,
         response_headers = '{}', response_body = NULL, resource = NULL, claim_id = EXCLUDED.claim_id, claimed_at = EXCLUDED.claimed_at,
         created_at = clock_timestamp(), expires_at = EXCLUDED.expires_at`,
      [row.organizationId, row.key, row.fingerprint, row.operationId, row.claimId, row.ttlSeconds],
    );
  },

  /**
   * Claims the key already bound to its resource, in the operation's own first transaction (deferred
   * mode's claim on bind): one statement that takes the key's transaction lock (as tryLock) and inserts the
   * PENDING record, replacing only an expired row. False when the lock is held or a live record exists
   * (another request with the key got there first): the caller's transaction then rolls back.
   */
  async claimBound(
    tx: Queryable,
    row: { organizationId: string; key: string; fingerprint: string; operationId: string; claimId: string; resource: string; ttlSeconds: number },
  ): Promise<boolean> {
    const rows = await tx.query(
      `INSERT INTO idempotency_keys (organization_id, idempotency_key, fingerprint, operation_id, state, status_code, resource, claim_id, claimed_at, expires_at)
       SELECT $1::text, $2::text, $3::text, $4::text, 'PENDING', NULL, $6::text, $5::text, clock_timestamp(), clock_timestamp() + make_interval(secs => $7)
        WHERE pg_try_advisory_xact_lock(hashtextextended($8::text, 0))
       ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, operation_id = EXCLUDED.operation_id, state = 'PENDING', status_code = NULL,
         response_headers = '{}', response_body = NULL, resource = EXCLUDED.resource, claim_id = EXCLUDED.claim_id, claimed_at = EXCLUDED.claimed_at,
         created_at = clock_timestamp(), expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= clock_timestamp()
       RETURNING 1`,
      [row.organizationId, row.key, row.fingerprint, row.operationId, row.claimId, row.resource, row.ttlSeconds, lockName(row.organizationId, row.key)],
    );
    return rows.length === 1;
  },

  /**
   * Stores a reply for a key nobody holds (deferred mode's claim on bind, when the operation answered
   * without writing anything: a business 4xx). False when the key's lock is held or a live record exists:
   * the other request's record stands.
   */
  async saveIfFree(
    db: Queryable,
    row: { organizationId: string; key: string; fingerprint: string; operationId: string; reply: ReplyToStore; ttlSeconds: number },
  ): Promise<boolean> {
    const rows = await db.query(
      `INSERT INTO idempotency_keys (organization_id, idempotency_key, fingerprint, operation_id, state, status_code, response_headers, response_body, expires_at)
       SELECT $1::text, $2::text, $3::text, $4::text, 'COMPLETE', $5::int, $6::jsonb, $7::jsonb, clock_timestamp() + make_interval(secs => $8)
        WHERE pg_try_advisory_xact_lock(hashtextextended($9::text, 0))
       ON CONFLICT (organization_id, idempotency_key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, operation_id = EXCLUDED.operation_id, state = 'COMPLETE', status_code = EXCLUDED.status_code,
         response_headers = EXCLUDED.response_headers, response_body = EXCLUDED.response_body,
         resource = NULL, claim_id = NULL, claimed_at = NULL,
         created_at = clock_timestamp(), expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= clock_timestamp()
       RETURNING 1`,
      [
        row.organizationId, row.key, row.fingerprint, row.operationId, row.reply.status, JSON.stringify(row.reply.headers), bodyParam(row.reply.body), row.ttlSeconds,
        lockName(row.organizationId, row.key),
      ],
    );
    return rows.length === 1;
  },

  /** Takes over an unbound claim whose lease ran out (the caller checked, under the key's lock). */
  async takeOver(tx: Queryable, organizationId: string, key: string, claimId: string): Promise<void> {
    await tx.query(
      `UPDATE idempotency_keys SET claim_id = $3, claimed_at = clock_timestamp()
        WHERE organization_id = $1 AND idempotency_key = $2 AND state = 'PENDING' AND resource IS NULL`,
      [organizationId, key, claimId],
    );
  },

  /** Binds this claim to its resource; false when the claim is no longer this claimer's (or already bound). */
  async bind(tx: Queryable, organizationId: string, key: string, claimId: string, resource: string): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE idempotency_keys SET resource = $4
        WHERE organization_id = $1 AND idempotency_key = $2 AND claim_id = $3 AND state = 'PENDING' AND resource IS NULL
        RETURNING 1`,
      [organizationId, key, claimId, resource],
    );
    return rows.length === 1;
  },

  /**
   * Completes a PENDING record with its reply: the claimer's own (claimId given), or one a recoverer built.
   * False when the record is no longer PENDING (someone completed it first: theirs stays).
   */
  async complete(tx: Queryable, organizationId: string, key: string, claimId: string | null, reply: ReplyToStore): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE idempotency_keys SET state = 'COMPLETE', status_code = $4, response_headers = $5, response_body = $6
        WHERE organization_id = $1 AND idempotency_key = $2 AND state = 'PENDING' AND ($3::text IS NULL OR claim_id = $3)
        RETURNING 1`,
      [organizationId, key, claimId, reply.status, JSON.stringify(reply.headers), bodyParam(reply.body)],
    );
    return rows.length === 1;
  },

  /** Gives an unbound claim back (its operation failed before writing anything), so a retry runs at once. */
  async release(db: Queryable, organizationId: string, key: string, claimId: string): Promise<void> {
    await db.query(
      `DELETE FROM idempotency_keys
        WHERE organization_id = $1 AND idempotency_key = $2 AND claim_id = $3 AND state = 'PENDING' AND resource IS NULL`,
      [organizationId, key, claimId],
    );
  },

  async purgeExpired(db: Queryable): Promise<number> {
    const rows = await db.query('DELETE FROM idempotency_keys WHERE expires_at <= clock_timestamp() RETURNING 1');
    return rows.length;
  },
};
