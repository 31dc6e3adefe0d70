/**
 * SQL of the orchestrator and the reconciliation worker: provider attempts (payment_transactions rows of
 * type PURCHASE / AUTHORIZE, one per provider tried) and the queue of transactions whose outcome is
 * unknown (status PENDING with a reconcile_after: attempts, and the lifecycle's follow-ups).
 */
import type { Queryable } from '../db/database.js';
import { fairPick, serializeClaims } from '../db/fair-claim.js';
import type { NewTransactionRow, TransactionRow } from '../db/payment-rows.js';

/** Serializes reconciliation claims across instances (arbitrary constant, like the other advisory locks). */
const CLAIM_LOCK = 727_019;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
const rawJson = (v: unknown) => (typeof v === 'string' ? v : json(v));

/** A transaction's columns with the orchestration ones. */
export interface AttemptRow extends TransactionRow {
  connection_id: string | null;
  reconcile_attempts: number;
  /** How many reversals of this late approval the provider reported failed (orchestration/reversals.ts). */
  reversals_failed: number;
  /** PENDING and not due for reconciliation yet: its call is (or may still be) running. */
  in_flight: boolean;
  /** A capture's `additional_data`, merged into the payment's once the capture is approved (payments/lifecycle.ts). */
  additional_data: unknown;
}

const COLUMNS = `id, payment_id, type, status, category, amount::text AS amount, provider_id, payment_method, response_code, response_message,
  reason, description, merchant_reference, provider_data, raw_response, provider_transaction_id, connection_data, merchant_advice_code,
  merchant_advice_code_message, payment_status_before, payment_sub_status_before, created_at::text AS created_at, updated_at::text AS updated_at,
  COALESCE(connection_id, connection_data->>'id') AS connection_id, reconcile_attempts, reversals_failed,
  (status = 'PENDING' AND reconcile_after > clock_timestamp()) AS in_flight, additional_data`;

/** What a provider said (or why it said nothing) as recorded on the transaction. */
export type AttemptRecord = Pick<
  TransactionRow,
  | 'status'
  | 'reason'
  | 'response_code'
  | 'response_message'
  | 'provider_data'
  | 'raw_response'
  | 'provider_transaction_id'
  | 'merchant_advice_code'
  | 'merchant_advice_code_message'
  | 'payment_method'
>;

/** A transaction the reconciliation worker claimed, with the organization of its payment. */
export interface DueTransaction extends AttemptRow {
  organization_id: string;
}

export const orchestrationRepository = {
  /**
   * Inserts a provider attempt PENDING: its deadline is when its call is overdue (timeout + grace), and the
   * reconciliation worker looks at it from then on unless the call's own phase C settled it first.
   */
  async insertAttempt(db: Queryable, t: NewTransactionRow & { connection_id: string; deadlineMs: number; additional_data?: unknown }): Promise<AttemptRow> {
    const rows = await db.query<AttemptRow>(
      `INSERT INTO payment_transactions (id, payment_id, type, status, category, amount, provider_id, payment_method, response_code,
         response_message, reason, description, merchant_reference, provider_data, raw_response, provider_transaction_id, connection_data,
         merchant_advice_code, merchant_advice_code_message, payment_status_before, payment_sub_status_before,
         connection_id, deadline_at, reconcile_after, additional_data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
         clock_timestamp() + make_interval(secs => $23::float8 / 1000), clock_timestamp() + make_interval(secs => $23::float8 / 1000), $24::json)
       RETURNING ${COLUMNS}`,
      [
        t.id, t.payment_id, t.type, t.status, t.category, t.amount, t.provider_id, json(t.payment_method), t.response_code,
        t.response_message, t.reason, t.description, t.merchant_reference, json(t.provider_data), rawJson(t.raw_response),
        t.provider_transaction_id, json(t.connection_data), t.merchant_advice_code, t.merchant_advice_code_message,
        t.payment_status_before, t.payment_sub_status_before, t.connection_id, t.deadlineMs, json(t.additional_data),
      ],
    );
    return rows[0]!;
  },

  /**
   * Records a provider's word on a transaction. `reconcileInMs`: the outcome is still unknown (status stays
   * PENDING) and reconciliation asks the provider after that delay; null: settled, out of the queue.
   */
  async record(db: Queryable, id: string, r: AttemptRecord, reconcileInMs: number | null): Promise<AttemptRow> {
    const rows = await db.query<AttemptRow>(
      `UPDATE payment_transactions SET status = $2, reason = $3, response_code = $4, response_message = $5, provider_data = $6,
         raw_response = $7, provider_transaction_id = $8, merchant_advice_code = $9, merchant_advice_code_message = $10,
         payment_method = COALESCE($11::json, payment_method),
         reconcile_after = CASE WHEN $12::float8 IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $12::float8 / 1000) END,
         claimed_until = NULL, updated_at = clock_timestamp()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id, r.status, r.reason, r.response_code, r.response_message, json(r.provider_data), rawJson(r.raw_response), r.provider_transaction_id,
        r.merchant_advice_code, r.merchant_advice_code_message, json(r.payment_method), reconcileInMs,
      ],
    );
    return rows[0]!;
  },

  /**
   * A late approval whose reversal the provider reported failed (reversals.ts): recorded as `r` with one more
   * failed reversal; due for reconciliation at once (its lookup count starts again) when `r` is PENDING.
   */
  async recordReversalFailed(db: Queryable, id: string, r: AttemptRecord): Promise<AttemptRow> {
    const rows = await db.query<AttemptRow>(
      `UPDATE payment_transactions SET status = $2, reason = $3, response_code = $4, response_message = $5,
         reversals_failed = reversals_failed + 1, reconcile_attempts = 0,
         reconcile_after = CASE WHEN $2 = 'PENDING' THEN clock_timestamp() ELSE NULL END,
         claimed_until = NULL, updated_at = clock_timestamp()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, r.status, r.reason, r.response_code, r.response_message],
    );
    return rows[0]!;
  },

  /** The payment's transactions with the orchestration columns, in creation order. */
  async transactionsOf(db: Queryable, paymentId: string): Promise<AttemptRow[]> {
    return db.query<AttemptRow>(`SELECT ${COLUMNS} FROM payment_transactions WHERE payment_id = $1 ORDER BY seq`, [paymentId]);
  },

  async find(db: Queryable, id: string): Promise<AttemptRow | undefined> {
    const rows = await db.query<AttemptRow>(`SELECT ${COLUMNS} FROM payment_transactions WHERE id = $1`, [id]);
    return rows[0];
  },

  /**
   * Claims up to `limit` transactions due for reconciliation (PENDING past their reconcile_after; a
   * follow-up without one is due `followUpGraceMs` after it was created) for `leaseMs`, fairly across
   * organizations (db/fair-claim.ts, the webhook deliveries' rule): at most `perOrganization` of one
   * organization's transactions are claimed at once over every instance (leases still running), and the
   * pick goes round robin over organizations, so one organization's backlog of hanging lookups never
   * fills the slots. Several instances share the queue (SKIP LOCKED, claims serialized by an advisory
   * lock); a claim whose worker died runs out. Each claim counts as a lookup (reconcile_attempts + 1) when
   * it is made, so a lookup that never reports (its worker died or hung past the lease) still backs off.
   * Run it in a transaction (the lock is held until it ends).
   */
  async claimDue(
    tx: Queryable,
    /** `reserve`: of the `limit`, slots kept for organizations with nothing claimed (db/fair-claim.ts). */
    c: { limit: number; leaseMs: number; followUpGraceMs: number; perOrganization: number; reserve?: number },
  ): Promise<DueTransaction[]> {
    await serializeClaims(tx, CLAIM_LOCK);
    const rows = await tx.query<DueTransaction>(
      `WITH held AS (
         SELECT p.organization_id, count(*)::int AS n
           FROM payment_transactions t JOIN payments p ON p.id = t.payment_id
          WHERE t.status = 'PENDING' AND t.claimed_until > clock_timestamp()
          GROUP BY p.organization_id
       ), ready AS (
         SELECT t.id, p.organization_id, COALESCE(t.reconcile_after, t.created_at + make_interval(secs => $3::float8 / 1000)) AS due_at, t.seq
           FROM payment_transactions t JOIN payments p ON p.id = t.payment_id
          WHERE t.status = 'PENDING' AND t.type IN ('PURCHASE', 'AUTHORIZE', 'CAPTURE', 'CANCEL', 'REFUND')
            AND COALESCE(t.reconcile_after, t.created_at + make_interval(secs => $3::float8 / 1000)) <= clock_timestamp()
            AND (t.claimed_until IS NULL OR t.claimed_until < clock_timestamp())
       ), picked AS (
         ${fairPick({ from: 'ready', group: 'organization_id', order: ['due_at', 'seq'], held: 'held', cap: '$4::int', limit: '$1::int', reserve: '$5::int' })}
       ), due AS (
         SELECT id FROM payment_transactions
          WHERE id IN (SELECT id FROM picked) AND status = 'PENDING' AND (claimed_until IS NULL OR claimed_until < clock_timestamp())
          FOR UPDATE SKIP LOCKED)
       UPDATE payment_transactions SET claimed_until = clock_timestamp() + make_interval(secs => $2::float8 / 1000),
         reconcile_attempts = reconcile_attempts + 1
        WHERE id IN (SELECT id FROM due)
       RETURNING ${COLUMNS}, (SELECT organization_id FROM payments p WHERE p.id = payment_id) AS organization_id`,
      [c.limit, c.leaseMs, c.followUpGraceMs, c.perOrganization, c.reserve ?? 0],
    );
    // In creation order (RETURNING keeps none): of two approvals of one payment, its earlier attempt's is taken.
    return rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
  },

  /**
   * The claimed lookup failed: asked again after the back-off of its count (`baseMs` doubling from the
   * first failure, at most `maxMs`: computed from the stored count, so it holds across restarts and
   * instances), claim released.
   */
  async backOff(db: Queryable, id: string, backoff: { baseMs: number; maxMs: number }): Promise<void> {
    await db.query(
      `UPDATE payment_transactions
          SET reconcile_after = clock_timestamp() + make_interval(secs => LEAST($2::float8 * power(2, LEAST(GREATEST(reconcile_attempts - 1, 0), 30)), $3::float8) / 1000),
              claimed_until = NULL
        WHERE id = $1 AND status = 'PENDING'`,
      [id, backoff.baseMs, backoff.maxMs],
    );
  },

  /**
   * Asked again after `delayMs`, claim released: a follow-up whose call went unanswered (due at once), or
   * a claimed transaction that is not a failure, only not now (its payment's route still runs): `claimed`
   * takes back the lookup its claim counted.
   */
  async postpone(db: Queryable, id: string, delayMs: number, claimed: boolean): Promise<void> {
    await db.query(
      `UPDATE payment_transactions SET reconcile_after = clock_timestamp() + make_interval(secs => $2::float8 / 1000),
         reconcile_attempts = GREATEST(reconcile_attempts - $3, 0), claimed_until = NULL
       WHERE id = $1 AND status = 'PENDING'`,
      [id, delayMs, claimed ? 1 : 0],
    );
  },

  /** What reconciliation has yet to settle: transactions PENDING past their reconcile time, and the oldest one's age. */
  async backlog(db: Queryable, followUpGraceMs: number): Promise<{ count: number; oldestAgeSeconds: number }> {
    const rows = await db.query<{ count: number; oldest: number | null }>(
      `SELECT count(*)::int AS count, extract(epoch FROM clock_timestamp() - min(created_at))::float8 AS oldest
         FROM payment_transactions
        WHERE status = 'PENDING' AND type IN ('PURCHASE', 'AUTHORIZE', 'CAPTURE', 'CANCEL', 'REFUND')
          AND COALESCE(reconcile_after, created_at + make_interval(secs => $1::float8 / 1000)) <= clock_timestamp()`,
      [followUpGraceMs],
    );
    return { count: rows[0]?.count ?? 0, oldestAgeSeconds: rows[0]?.oldest ?? 0 };
  },

  /**
   * What a follow-up (capture, cancel, refund) was sent against, for its lookup: the provider's id of its
   * payment's approved attempt through the same provider and connection (the authorization or purchase
   * lifecycle.ts reserved it on; a refund of a capture goes against the authorization, as there), and the
   * payment's currency. undefined when there is none (the lookup then goes by our reference alone).
   */
  async followUpTarget(db: Queryable, followUpId: string): Promise<{ provider_transaction_id: string; currency: string } | undefined> {
    const rows = await db.query<{ provider_transaction_id: string; currency: string }>(
      `SELECT a.provider_transaction_id, p.currency
         FROM payment_transactions f
         JOIN payments p ON p.id = f.payment_id
         JOIN payment_transactions a ON a.payment_id = f.payment_id
        WHERE f.id = $1 AND a.type IN ('PURCHASE', 'AUTHORIZE') AND a.status = 'SUCCEEDED' AND a.provider_transaction_id IS NOT NULL
          AND a.provider_id IS NOT DISTINCT FROM f.provider_id
          AND COALESCE(a.connection_id, a.connection_data->>'id') IS NOT DISTINCT FROM COALESCE(f.connection_id, f.connection_data->>'id')
        ORDER BY a.created_at, a.seq
        LIMIT 1`,
      [followUpId],
    );
    return rows[0];
  },
};
