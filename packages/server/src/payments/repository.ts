/**
 * SQL of payments, their transactions, status history, disputes, evidence and provider notifications.
 * The only module of payments that speaks SQL (the outbox has its own). jsonb columns hold API-shaped
 * snapshots and come back parsed; NUMERIC and timestamps come back as exact strings.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { NewTransactionRow, PaymentRow, PaymentWithTransactions, TransactionRow } from '../db/payment-rows.js';

// The payments and payment_transactions rows are shared with orchestration (db/payment-rows.ts).
export type { NewTransactionRow, PaymentRow, TransactionRow } from '../db/payment-rows.js';

export type NewPaymentRow = Omit<PaymentRow, 'created_at' | 'updated_at' | 'amount_captured' | 'amount_refunded' | 'taxes' | 'routing_rules'>;

export interface HistoryRow {
  id: string;
  status: string;
  sub_status: string;
  transaction_id: string | null;
  transaction_status: string | null;
  reason: string | null;
  created_at: string;
}

export interface DisputeRow {
  id: string;
  payment_id: string;
  transaction_id: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface NewEvidenceRow {
  id: string;
  dispute_id: string;
  file_name: string;
  content_type: string;
  content_category: string;
  sha256: Buffer;
  content: Buffer;
}

export interface EvidenceRow {
  id: string;
  file_name: string;
  content_type: string;
  content_category: string;
  sha256: Uint8Array;
  content: Uint8Array;
}

const PAYMENT_COLUMNS = `id, organization_id, account_id, customer_id, description, country, merchant_order_id, status, sub_status,
  currency, amount_value, amount_captured, amount_refunded, workflow, callback_url, metadata, additional_data, customer_payer,
  payment_method, taxes, request_details, routing_rules, created_at, updated_at`;

const TRANSACTION_COLUMNS = `id, payment_id, type, status, category, amount, provider_id, payment_method, response_code, response_message,
  reason, description, merchant_reference, provider_data, raw_response, provider_transaction_id, connection_data, merchant_advice_code,
  merchant_advice_code_message, payment_status_before, payment_sub_status_before, created_at, updated_at`;

/** The same columns inside json_agg: NUMERIC and timestamps as text, so they stay exact strings. */
const TRANSACTION_JSON_COLUMNS = TRANSACTION_COLUMNS.replace(/\bamount\b/, 'amount::text AS amount')
  .replace(/\bcreated_at\b/, 'created_at::text AS created_at')
  .replace(/\bupdated_at\b/, 'updated_at::text AS updated_at');

/** One payment (`where` on payments p) with its transactions in creation order, in one statement. */
async function paymentWithTransactions(db: Queryable, where: string, params: unknown[]): Promise<PaymentWithTransactions | undefined> {
  const rows = await db.query<PaymentRow & { transactions: TransactionRow[] }>(
    `SELECT ${PAYMENT_COLUMNS},
       (SELECT COALESCE(json_agg(t ORDER BY t.seq), '[]'::json)
          FROM (SELECT ${TRANSACTION_JSON_COLUMNS}, seq FROM payment_transactions WHERE payment_id = p.id) t) AS transactions
       FROM payments p WHERE ${where}`,
    params,
  );
  const row = rows[0];
  if (!row) return undefined;
  const { transactions, ...payment } = row;
  return { payment, transactions };
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
/** A raw provider document: JSON text is stored verbatim, an object as its JSON. */
const rawJson = (v: unknown) => (typeof v === 'string' ? v : json(v));

/** What a state change writes on the payment row. */
export type PaymentChange = { status: string; subStatus: string; paymentMethod?: unknown; captured?: string; refunded?: string };

export const paymentsRepository = {
  /**
   * A new payment with its routing decision and its first history row (its status as created), in one
   * statement (issue 26: phase A's round trips).
   */
  async insertPayment(db: Queryable, p: NewPaymentRow & { routing_rules?: unknown }): Promise<PaymentRow> {
    const rows = await db.query<PaymentRow>(
      `WITH inserted AS (
         INSERT INTO payments (id, organization_id, account_id, customer_id, description, country, merchant_order_id, status, sub_status,
           currency, amount_value, workflow, callback_url, metadata, additional_data, customer_payer, payment_method, request_details, routing_rules)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
         RETURNING ${PAYMENT_COLUMNS}
       ), history AS (
         INSERT INTO payment_history (id, payment_id, status, sub_status, transaction_id, transaction_status, reason)
         SELECT $20, id, status, sub_status, NULL, NULL, NULL FROM inserted
       )
       SELECT * FROM inserted`,
      [
        p.id, p.organization_id, p.account_id, p.customer_id, p.description, p.country, p.merchant_order_id, p.status, p.sub_status,
        p.currency, p.amount_value, p.workflow, p.callback_url, json(p.metadata ?? []), json(p.additional_data), json(p.customer_payer),
        json(p.payment_method), json(p.request_details), json(p.routing_rules), randomUUID(),
      ],
    );
    return rows[0]!;
  },

  /**
   * Locks the payment without waiting (payments/payment-lock.ts) and reads it: undefined when it does not
   * exist (or is not `organizationId`'s, when given); lock_not_available (55P03) when another transaction holds it.
   */
  async lockPaymentNowait(db: Queryable, id: string, organizationId: string | null): Promise<PaymentRow | undefined> {
    const rows = await db.query<PaymentRow>(
      `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 AND ($2::text IS NULL OR organization_id = $2) FOR UPDATE NOWAIT`,
      [id, organizationId],
    );
    return rows[0];
  },

  /** Whether the organization owns the payment: a plain read by the primary key, no lock taken or waited for. */
  async ownsPayment(db: Queryable, id: string, organizationId: string): Promise<boolean> {
    return (await db.query('SELECT 1 FROM payments WHERE id = $1 AND organization_id = $2', [id, organizationId])).length > 0;
  },

  /** The organization's payment (another organization's is "not found" too); locked when asked. */
  async findPayment(db: Queryable, organizationId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<PaymentRow | undefined> {
    const rows = await db.query<PaymentRow>(
      `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 AND organization_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
      [id, organizationId],
    );
    return rows[0];
  },

  /**
   * The organization's payment with its transactions in creation order, in one round trip (GET
   * /payments/{id} is the hottest read: the transactions come as a json array, amounts as exact text).
   */
  async findPaymentWithTransactions(db: Queryable, organizationId: string, id: string): Promise<PaymentWithTransactions | undefined> {
    return paymentWithTransactions(db, 'id = $1 AND organization_id = $2', [id, organizationId]);
  },

  /** The payment a transaction belongs to, with all its transactions (a follow-up's reply, by its transaction id). */
  async findPaymentOfTransaction(db: Queryable, transactionId: string): Promise<PaymentWithTransactions | undefined> {
    return paymentWithTransactions(db, 'id = (SELECT payment_id FROM payment_transactions WHERE id = $1)', [transactionId]);
  },

  /**
   * The organization's payments with their transactions, newest first, filtered (each filter optional);
   * the page starts after the payment `afterId`.
   */
  async listPaymentsWithTransactions(
    db: Queryable,
    organizationId: string,
    filter: { merchantOrderId: string | null; status: string | null; customerId: string | null; createdGte: string | null; createdLt: string | null },
    limit: number,
    afterId: string | null,
  ): Promise<{ payment: PaymentRow; transactions: TransactionRow[] }[]> {
    const rows = await db.query<PaymentRow & { transactions: TransactionRow[] }>(
      `SELECT ${PAYMENT_COLUMNS},
         (SELECT COALESCE(json_agg(t ORDER BY t.seq), '[]'::json)
            FROM (SELECT ${TRANSACTION_JSON_COLUMNS}, seq FROM payment_transactions WHERE payment_id = p.id) t) AS transactions
         FROM payments p
        WHERE organization_id = $1 AND ($2::text IS NULL OR merchant_order_id = $2) AND ($3::text IS NULL OR status = $3)
          AND ($4::text IS NULL OR customer_id = $4)
          AND ($5::timestamptz IS NULL OR created_at >= $5::timestamptz) AND ($6::timestamptz IS NULL OR created_at < $6::timestamptz)
          AND ($7::text IS NULL OR (created_at, id) < (SELECT c.created_at, c.id FROM payments c WHERE c.id = $7 AND c.organization_id = $1))
        ORDER BY created_at DESC, id DESC LIMIT $8`,
      [organizationId, filter.merchantOrderId, filter.status, filter.customerId, filter.createdGte, filter.createdLt, afterId, limit],
    );
    return rows.map(({ transactions, ...payment }) => ({ payment, transactions }));
  },

  async paymentExists(db: Queryable, organizationId: string, id: string): Promise<boolean> {
    return (await db.query('SELECT 1 FROM payments WHERE id = $1 AND organization_id = $2', [id, organizationId])).length > 0;
  },

  /** A payment by id alone, not locked (a settled follow-up's reply names only its transaction). */
  async findPaymentById(db: Queryable, id: string): Promise<PaymentRow | undefined> {
    const rows = await db.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1`, [id]);
    return rows[0];
  },

  /** A payment by id alone (provider notifications name our payment id), locked for the change. */
  async lockPaymentById(db: Queryable, id: string): Promise<PaymentRow | undefined> {
    const rows = await db.query<PaymentRow>(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = $1 FOR UPDATE`, [id]);
    return rows[0];
  },

  async updatePayment(
    db: Queryable,
    id: string,
    change: PaymentChange,
  ): Promise<PaymentRow> {
    const rows = await db.query<PaymentRow>(
      `UPDATE payments SET status = $2, sub_status = $3,
         payment_method = COALESCE($4::json, payment_method),
         amount_captured = COALESCE($5::numeric, amount_captured),
         amount_refunded = COALESCE($6::numeric, amount_refunded),
         updated_at = clock_timestamp()
       WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`,
      [id, change.status, change.subStatus, json(change.paymentMethod), change.captured ?? null, change.refunded ?? null],
    );
    return rows[0]!;
  },

  /** An approved capture's `additional_data` completes the payment's: each member given replaces the payment's own (in the transaction that moves the payment). */
  async mergeAdditionalData(db: Queryable, id: string, data: Record<string, unknown>): Promise<void> {
    await db.query(`UPDATE payments SET additional_data = (COALESCE(additional_data::jsonb, '{}'::jsonb) || $2::jsonb)::json WHERE id = $1`, [id, JSON.stringify(data)]);
  },

  /** Marks the payment changed without a status change (evidence added), for updated_at and the ETag. */
  async touchPayment(db: Queryable, id: string): Promise<PaymentRow> {
    const rows = await db.query<PaymentRow>(`UPDATE payments SET updated_at = clock_timestamp() WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}`, [id]);
    return rows[0]!;
  },

  /** Whether a vaulted card was already charged successfully in the organization. */
  async vaultedTokenCharged(db: Queryable, organizationId: string, vaultedToken: string): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM payments WHERE organization_id = $1 AND payment_method->>'vaulted_token' = $2 AND amount_captured > 0 LIMIT 1`,
      [organizationId, vaultedToken],
    );
    return rows.length > 0;
  },

  async insertTransaction(db: Queryable, t: NewTransactionRow): Promise<TransactionRow> {
    const rows = await db.query<TransactionRow>(
      `INSERT INTO payment_transactions (id, payment_id, type, status, category, amount, provider_id, payment_method, response_code,
         response_message, reason, description, merchant_reference, provider_data, raw_response, provider_transaction_id, connection_data,
         merchant_advice_code, merchant_advice_code_message, payment_status_before, payment_sub_status_before)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
       RETURNING ${TRANSACTION_COLUMNS}`,
      [
        t.id, t.payment_id, t.type, t.status, t.category, t.amount, t.provider_id, json(t.payment_method), t.response_code,
        t.response_message, t.reason, t.description, t.merchant_reference, json(t.provider_data), rawJson(t.raw_response),
        t.provider_transaction_id, json(t.connection_data), t.merchant_advice_code, t.merchant_advice_code_message,
        t.payment_status_before, t.payment_sub_status_before,
      ],
    );
    return rows[0]!;
  },

  /** Every transaction of the payment in the order it was created. */
  async listTransactions(db: Queryable, paymentId: string): Promise<TransactionRow[]> {
    return db.query<TransactionRow>(`SELECT ${TRANSACTION_COLUMNS} FROM payment_transactions WHERE payment_id = $1 ORDER BY seq`, [paymentId]);
  },

  async findTransaction(db: Queryable, paymentId: string, id: string): Promise<TransactionRow | undefined> {
    const rows = await db.query<TransactionRow>(`SELECT ${TRANSACTION_COLUMNS} FROM payment_transactions WHERE id = $1 AND payment_id = $2`, [
      id,
      paymentId,
    ]);
    return rows[0];
  },

  /** The payment's chargeback still open (CREATED), the newest if several. */
  async findOpenChargeback(db: Queryable, paymentId: string): Promise<TransactionRow | undefined> {
    const rows = await db.query<TransactionRow>(
      `SELECT ${TRANSACTION_COLUMNS} FROM payment_transactions
        WHERE payment_id = $1 AND type = 'CHARGEBACK' AND status = 'CREATED' ORDER BY seq DESC LIMIT 1`,
      [paymentId],
    );
    return rows[0];
  },

  /** Names the connection a transaction came through (a chargeback notified per connection). */
  async setConnection(db: Queryable, id: string, connectionId: string): Promise<void> {
    await db.query('UPDATE payment_transactions SET connection_id = $2 WHERE id = $1', [id, connectionId]);
  },

  async setTransactionStatus(db: Queryable, id: string, status: string): Promise<TransactionRow> {
    const rows = await db.query<TransactionRow>(
      `UPDATE payment_transactions SET status = $2, updated_at = clock_timestamp() WHERE id = $1 RETURNING ${TRANSACTION_COLUMNS}`,
      [id, status],
    );
    return rows[0]!;
  },

  async insertHistory(
    db: Queryable,
    h: { id: string; paymentId: string; status: string; subStatus: string; transactionId: string | null; transactionStatus: string | null; reason: string | null },
  ): Promise<void> {
    await db.query(
      `INSERT INTO payment_history (id, payment_id, status, sub_status, transaction_id, transaction_status, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [h.id, h.paymentId, h.status, h.subStatus, h.transactionId, h.transactionStatus, h.reason],
    );
  },

  /**
   * A payment's state change and its history row, together (every transaction that moves a payment writes
   * both, in the caller's transaction): the payment as it is now.
   */
  async movePayment(
    db: Queryable,
    paymentId: string,
    next: PaymentChange,
    because: { transactionId: string; transactionStatus: string; reason: string | null },
  ): Promise<PaymentRow> {
    const rows = await db.query<PaymentRow>(
      `WITH moved AS (
         UPDATE payments SET status = $2, sub_status = $3,
           payment_method = COALESCE($4::json, payment_method),
           amount_captured = COALESCE($5::numeric, amount_captured),
           amount_refunded = COALESCE($6::numeric, amount_refunded),
           updated_at = clock_timestamp()
         WHERE id = $1 RETURNING ${PAYMENT_COLUMNS}
       ), history AS (
         INSERT INTO payment_history (id, payment_id, status, sub_status, transaction_id, transaction_status, reason)
         SELECT $7, id, status, sub_status, $8, $9, $10 FROM moved
       )
       SELECT * FROM moved`,
      [
        paymentId, next.status, next.subStatus, json(next.paymentMethod), next.captured ?? null, next.refunded ?? null,
        randomUUID(), because.transactionId, because.transactionStatus, because.reason,
      ],
    );
    return rows[0]!;
  },

  /** The payment's status changes, oldest first. */
  async listHistory(db: Queryable, paymentId: string): Promise<HistoryRow[]> {
    return db.query<HistoryRow>(
      'SELECT id, status, sub_status, transaction_id, transaction_status, reason, created_at FROM payment_history WHERE payment_id = $1 ORDER BY seq',
      [paymentId],
    );
  },

  async insertDispute(db: Queryable, d: { id: string; paymentId: string; transactionId: string; status: string }): Promise<DisputeRow> {
    const rows = await db.query<DisputeRow>(
      `INSERT INTO disputes (id, payment_id, transaction_id, status) VALUES ($1, $2, $3, $4)
       RETURNING id, payment_id, transaction_id, status, created_at, updated_at`,
      [d.id, d.paymentId, d.transactionId, d.status],
    );
    return rows[0]!;
  },

  async findDisputeByTransaction(db: Queryable, transactionId: string): Promise<DisputeRow | undefined> {
    const rows = await db.query<DisputeRow>(
      'SELECT id, payment_id, transaction_id, status, created_at, updated_at FROM disputes WHERE transaction_id = $1',
      [transactionId],
    );
    return rows[0];
  },

  async resolveDispute(db: Queryable, id: string, status: string): Promise<void> {
    await db.query('UPDATE disputes SET status = $2, updated_at = clock_timestamp(), resolved_at = clock_timestamp() WHERE id = $1', [id, status]);
  },

  /** How many documents and decoded bytes a dispute holds. */
  async evidenceTotals(db: Queryable, disputeId: string): Promise<{ documents: number; bytes: number }> {
    const rows = await db.query<{ documents: number; bytes: number }>(
      'SELECT count(*)::int AS documents, COALESCE(sum(size_bytes), 0)::int8 AS bytes FROM dispute_evidence WHERE dispute_id = $1',
      [disputeId],
    );
    return rows[0]!;
  },

  /** The file goes as a bytea parameter: binary on the pg wire, native hex with PGlite (see db/pglite.ts). */
  async insertEvidence(db: Queryable, e: NewEvidenceRow): Promise<void> {
    await db.query(
      `INSERT INTO dispute_evidence (id, dispute_id, file_name, content_type, content_category, size_bytes, sha256, content)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [e.id, e.dispute_id, e.file_name, e.content_type, e.content_category, e.content.length, e.sha256, e.content],
    );
  },

  /**
   * The evidence documents of a dispute by id, in submission order. The file comes back as base64 text
   * (PostgreSQL encodes, Node decodes natively). Read as bytea instead, both drivers decode its hex text
   * while parsing the row, so no large string outlives the round trip, but hex is 2 MB a document to
   * receive and a slower decode: measured in the dispute bench (2026-11-27, same runs against the build
   * before), ~4 ms more service CPU a dispute and 15 % fewer disputes a second for ~20 MB less peak
   * growth, so base64 stays (docs/benchmarks.md, "The dispute scenario's memory").
   */
  async listEvidence(db: Queryable, disputeId: string, ids: readonly string[]): Promise<EvidenceRow[]> {
    const rows = await db.query<Omit<EvidenceRow, 'content'> & { content: string }>(
      `SELECT id, file_name, content_type, content_category, sha256, encode(content, 'base64') AS content FROM dispute_evidence
        WHERE dispute_id = $1 AND id = ANY($2::text[]) ORDER BY seq`,
      [disputeId, ids],
    );
    return rows.map((r) => ({ ...r, content: Buffer.from(r.content, 'base64') }));
  },

  async markEvidenceForwarded(db: Queryable, ids: readonly string[]): Promise<void> {
    await db.query('UPDATE dispute_evidence SET forwarded_at = clock_timestamp() WHERE id = ANY($1::text[]) AND forwarded_at IS NULL', [ids]);
  },

  /** Records a provider notification; false when its id was seen before (nothing else may change then). */
  async recordNotification(db: Queryable, n: { providerId: string; notificationId: string; type: string; payload: unknown }): Promise<boolean> {
    const rows = await db.query(
      `INSERT INTO provider_notifications (provider_id, notification_id, type, payload) VALUES ($1, $2, $3, $4)
       ON CONFLICT (provider_id, notification_id) DO NOTHING RETURNING notification_id`,
      [n.providerId, n.notificationId, n.type, json(n.payload)],
    );
    return rows.length > 0;
  },
};
