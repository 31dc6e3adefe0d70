/**
 * What orchestration needs of payments, declared here so orchestration imports nothing of payments
 * (dependencies point one way: payments calls into orchestration, never the reverse). Payments supplies
 * the implementation (payments/orchestration-port.ts); it is wired once into the Orchestration services
 * (src/services.ts), so the request's route (orchestrator.ts) and the reconciliation worker use the same.
 * Rows are the shared storage shapes (db/payment-rows.ts).
 */
import type { Queryable } from '../db/database.js';
import type { PaymentRow, PaymentWithTransactions } from '../db/payment-rows.js';

/** What a payment's state change writes on its row. */
export interface PaymentMove {
  status: string;
  subStatus: string;
  paymentMethod?: unknown;
  captured?: string;
}

/** The transaction a payment's state change is due to (its history row). */
export interface PaymentMoveCause {
  transactionId: string | null;
  transactionStatus: string | null;
  reason: string | null;
}

/** The merchant events a provider attempt's outcome announces. */
export type AttemptOutcomeEvent = 'payment.succeeded' | 'payment.authorized' | 'payment.declined' | 'payment.failed';

export interface PaymentPort {
  /**
   * Runs `fn` in a transaction holding the payment's row lock, queued per payment in memory
   * (payments/payment-lock.ts): `locked` is the payment as the lock read it, null on re-entry.
   */
  inPaymentTransaction<T>(
    db: Queryable,
    paymentId: string,
    organizationId: string | null,
    fn: (tx: Queryable, locked: { payment: PaymentRow | undefined } | null) => Promise<T>,
    /** What `fn` may write besides the payment, locked first (payments/lock-order.ts). */
    first?: { customerId?: string | null; vaultedToken?: string | null } | { ofPayment: string },
  ): Promise<T>;
  /** The payment by id, locked FOR UPDATE in `tx`. */
  lockPaymentById(tx: Queryable, id: string): Promise<PaymentRow | undefined>;
  /**
   * As lockPaymentById, for a transaction that may settle the payment: its vaulted card (whose use is
   * recorded) is locked first, in the order of payments/lock-order.ts.
   */
  lockPaymentToSettle(tx: Queryable, id: string): Promise<PaymentRow | undefined>;
  /** The payment's state change and its history row, in one statement: the payment as it is now. */
  movePayment(tx: Queryable, paymentId: string, next: PaymentMove, because: PaymentMoveCause & { transactionId: string; transactionStatus: string }): Promise<PaymentRow>;
  /** The payment's state change alone (its history row is `insertHistory`). */
  updatePayment(tx: Queryable, id: string, change: PaymentMove): Promise<PaymentRow>;
  insertHistory(tx: Queryable, h: PaymentMoveCause & { id: string; paymentId: string; status: string; subStatus: string }): Promise<void>;
  /** The merchant event announcing the payment's outcome, in the same transaction as the change: the payment as the event shows it. */
  recordPaymentOutcome(tx: Queryable, payment: PaymentRow, type: AttemptOutcomeEvent): Promise<PaymentWithTransactions>;
  /** The vaulted card's record of a payment made with it (last used, last successfully used). */
  markVaultedCardUsed(tx: Queryable, vaultedToken: string, succeeded: boolean): Promise<void>;
}
