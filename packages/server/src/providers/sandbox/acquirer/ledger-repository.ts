import type { Queryable } from '../../../db/database.js';
import type { FailsOn, LedgerStatus, OperationKind } from './ledger.js';

/** A sandbox_acquirer_transactions row (migration 0022); id, kind and answer are NULL for a tombstone. */
export interface LedgerRow {
  reference: string;
  id: string | null;
  kind: OperationKind | null;
  status: LedgerStatus | null;
  amount_value: string | null;
  currency: string | null;
  payment_id: string | null;
  target_id: string | null;
  http_status: number | null;
  answer: string | null;
  held: boolean;
  fails_on: FailsOn | null;
  created_at: string;
  expires_at: string | null;
}

/** What a follow-up reads of its target. */
export interface TargetRow {
  status: LedgerStatus;
  payment_id: string | null;
  fails_on: FailsOn | null;
}

export interface NewLedgerRow {
  reference: string;
  id: string;
  kind: OperationKind;
  status: LedgerStatus;
  amountValue: string;
  currency: string;
  paymentId: string | null;
  targetId: string | null;
  httpStatus: number;
  /** The answer's JSON text. */
  answer: string;
  held: boolean;
  failsOn: FailsOn | null;
  createdAt: string;
  expiresAt: string | null;
}

const COLUMNS = 'reference, id, kind, status, amount_value, currency, payment_id, target_id, http_status, answer, held, fails_on, created_at, expires_at';

/** The sandbox acquirers' ledgers (SQL only; sql-ledger.ts decides). */
export const sandboxLedgerRepository = {
  /** Inserts the line unless its reference is taken; true when inserted. */
  async insert(db: Queryable, acquirer: string, r: NewLedgerRow): Promise<boolean> {
    const rows = await db.query(
      `INSERT INTO sandbox_acquirer_transactions (acquirer, ${COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (acquirer, reference) DO NOTHING RETURNING 1 AS inserted`,
      [acquirer, r.reference, r.id, r.kind, r.status, r.amountValue, r.currency, r.paymentId, r.targetId, r.httpStatus, r.answer, r.held, r.failsOn, r.createdAt, r.expiresAt],
    );
    return rows.length === 1;
  },

  /** Tombstones the reference unless it is taken; true when tombstoned now. */
  async tombstone(db: Queryable, acquirer: string, reference: string): Promise<boolean> {
    const rows = await db.query(
      'INSERT INTO sandbox_acquirer_transactions (acquirer, reference) VALUES ($1, $2) ON CONFLICT (acquirer, reference) DO NOTHING RETURNING 1 AS inserted',
      [acquirer, reference],
    );
    return rows.length === 1;
  },

  async find(db: Queryable, acquirer: string, reference: string): Promise<LedgerRow | undefined> {
    const rows = await db.query<LedgerRow>(`SELECT ${COLUMNS} FROM sandbox_acquirer_transactions WHERE acquirer = $1 AND reference = $2`, [acquirer, reference]);
    return rows[0];
  },

  /** A follow-up's target, locked for the rest of the transaction. */
  async lockTarget(db: Queryable, acquirer: string, id: string): Promise<TargetRow | undefined> {
    const rows = await db.query<TargetRow>('SELECT status, payment_id, fails_on FROM sandbox_acquirer_transactions WHERE acquirer = $1 AND id = $2 FOR UPDATE', [
      acquirer,
      id,
    ]);
    return rows[0];
  },

  /** Ends a PENDING payment request in one statement (past its deadline, an approval is EXPIRED); the row after, whatever its status. */
  async settlePending(db: Queryable, acquirer: string, id: string, outcome: string): Promise<LedgerRow | undefined> {
    const updated = await db.query<LedgerRow>(
      `UPDATE sandbox_acquirer_transactions
          SET status = CASE WHEN $3 = 'APPROVED' AND expires_at IS NOT NULL AND expires_at <= clock_timestamp() THEN 'EXPIRED' ELSE $3 END
        WHERE acquirer = $1 AND id = $2 AND status = 'PENDING' RETURNING ${COLUMNS}`,
      [acquirer, id, outcome],
    );
    if (updated[0]) return updated[0];
    const rows = await db.query<LedgerRow>(`SELECT ${COLUMNS} FROM sandbox_acquirer_transactions WHERE acquirer = $1 AND id = $2`, [acquirer, id]);
    return rows[0];
  },

  async setStatus(db: Queryable, acquirer: string, id: string, status: LedgerStatus): Promise<void> {
    await db.query('UPDATE sandbox_acquirer_transactions SET status = $3 WHERE acquirer = $1 AND id = $2', [acquirer, id, status]);
  },

  async rewrite(db: Queryable, acquirer: string, reference: string, status: LedgerStatus, answer: string): Promise<void> {
    await db.query('UPDATE sandbox_acquirer_transactions SET status = $3, answer = $4 WHERE acquirer = $1 AND reference = $2 AND id IS NOT NULL', [
      acquirer,
      reference,
      status,
      answer,
    ]);
  },

  /** Every operation (no tombstone), oldest first. */
  async list(db: Queryable, acquirer: string): Promise<LedgerRow[]> {
    return db.query<LedgerRow>(`SELECT ${COLUMNS} FROM sandbox_acquirer_transactions WHERE acquirer = $1 AND id IS NOT NULL ORDER BY seq`, [acquirer]);
  },

  async clear(db: Queryable, acquirer: string): Promise<void> {
    await db.query('DELETE FROM sandbox_acquirer_transactions WHERE acquirer = $1', [acquirer]);
  },
};
