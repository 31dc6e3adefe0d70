/**
 * The reply of POST /payments, built from the database: what the request that created the payment answers,
 * and what a retry with its X-Idempotency-Key gets when the request's own reply was never stored (its
 * process died after the payment was bound to the key: idempotency's deferred mode, the 'payment'
 * recoverer). One function for both, so a recovered reply is the reply the request would have given.
 */
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import type { PaymentWithTransactions } from '../db/payment-rows.js';
import type { Recoverer, Reply } from '../idempotency/idempotency.js';
import { isAttempt, isUndecided } from '../orchestration/settle.js';
import { toCreatedPayment } from './mapper.js';
import { paymentsRepository as repo, type TransactionRow } from './repository.js';

/** An attempt whose outcome is not known yet: being called, or waiting for reconciliation (status PENDING). */
export const isInFlight = (t: TransactionRow) => isAttempt(t) && t.status === 'PENDING';

/**
 * The created payment. `transactions` is the deciding attempt (the approved one, else the last one),
 * `transactions_history` every attempt. settledOnly (a retry's recovery): null while an attempt is in flight
 * or the payment undecided, so the retry gets 409 REQUEST_IN_PROCESS until reconciliation settled it.
 */
export async function createdPaymentOf(
  db: Queryable,
  organizationId: string,
  paymentId: string,
  options: { settledOnly: boolean } = { settledOnly: true },
): Promise<Schemas['CreatedPayment'] | null> {
  const found = await repo.findPaymentWithTransactions(db, organizationId, paymentId);
  return found ? createdPaymentFrom(found, options) : null;
}

/** createdPaymentOf from a read already made in the transaction (the approval's event read it). */
export function createdPaymentFrom(found: PaymentWithTransactions, options: { settledOnly: boolean }): Schemas['CreatedPayment'] | null {
  const attempts = found.transactions.filter(isAttempt);
  const deciding = attempts.find((t) => t.status === 'SUCCEEDED') ?? attempts.at(-1);
  if (!deciding) return null;
  if (options.settledOnly && (isUndecided(found.payment) || attempts.some(isInFlight))) return null;
  return toCreatedPayment(found.payment, deciding, attempts);
}

/** Deferred idempotency's recoverer for resources 'payment:<id>' (createPayment). */
export const paymentRecoverer: Recoverer = async (db, { organizationId, id }): Promise<Reply | null> => {
  const payment = await createdPaymentOf(db, organizationId, id);
  return payment ? { status: 201, body: payment } : null;
};
