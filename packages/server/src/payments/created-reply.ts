/**
 * The reply of POST /payments, built from the database: what the request that created the payment answers,
 * and what a retry with its X-Idempotency-Key gets when the request's own reply was never stored (its
 * process died after the payment was bound to the key: idempotency's deferred mode, the 'payment'
 * recoverer). One function for both, so a recovered reply is the reply the request would have given.
 */
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import type { Recoverer, Reply } from '../idempotency/idempotency.js';
import { toCreatedPayment } from './mapper.js';
import { paymentsRepository as repo, type TransactionRow } from './repository.js';

/** The transaction types a payment's provider attempts have (one per provider tried). */
export const ATTEMPT_TYPES: ReadonlySet<string> = new Set(['PURCHASE', 'AUTHORIZE']);

/** An attempt whose outcome is not known yet: being called, or waiting for reconciliation (status PENDING). */
export const isInFlight = (t: TransactionRow) => ATTEMPT_TYPES.has(t.type) && t.status === 'PENDING';

/**
 * The created payment, or null while it is not settled (an attempt in flight, or not even tried): the
 * retry gets 409 REQUEST_IN_PROCESS then, and the answer once reconciliation has settled it.
 * `transactions` is the deciding attempt (the last one), `transactions_history` every attempt.
 */
export async function createdPaymentOf(db: Queryable, organizationId: string, paymentId: string): Promise<Schemas['CreatedPayment'] | null> {
  const found = await repo.findPaymentWithTransactions(db, organizationId, paymentId);
  if (!found) return null;
  const attempts = found.transactions.filter((t) => ATTEMPT_TYPES.has(t.type));
  const deciding = attempts.at(-1);
  if (!deciding || found.payment.status === 'CREATED' || attempts.some(isInFlight)) return null;
  return toCreatedPayment(found.payment, deciding, attempts);
}

/** Deferred idempotency's recoverer for resources 'payment:<id>' (createPayment). */
export const paymentRecoverer: Recoverer = async (db, { organizationId, id }): Promise<Reply | null> => {
  const payment = await createdPaymentOf(db, organizationId, id);
  return payment ? { status: 201, body: payment } : null;
};
