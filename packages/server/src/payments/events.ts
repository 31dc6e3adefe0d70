/**
 * Merchant webhook events of payments, recorded through the webhooks domain in the same transaction as
 * the state change they announce (so an event exists if and only if the change committed). The payment
 * is sent as getPayment answers it at that moment.
 */
import type { Queryable } from '../db/database.js';
import type { PaymentWithTransactions } from '../db/payment-rows.js';
import { recordEvent } from '../webhooks/index.js';
import { toApiPayment, toApiTransaction } from './mapper.js';
import { paymentsRepository as repo, type PaymentRow, type TransactionRow } from './repository.js';

/** The payment with its transactions, read as GET /payments/{id} reads them: what every payment event carries. */
const readForEvent = async (tx: Queryable, payment: PaymentRow): Promise<PaymentWithTransactions> =>
  (await repo.findPaymentWithTransactions(tx, payment.organization_id, payment.id))!;

const retrievalShape = async (tx: Queryable, payment: PaymentRow) => {
  const now = await readForEvent(tx, payment);
  return toApiPayment(now.payment, now.transactions, null, { rawResponse: false });
};

/**
 * payment.succeeded / declined / authorized after the provider answered; captured / canceled / refunded
 * after those operations. The payment is read once with its transactions, as GET /payments/{id} reads it,
 * and that read is returned: a request that answers with the payment in the same transaction, changing
 * nothing of it after the event (createPayment's approval), builds its reply from it instead of reading again.
 */
export async function recordPaymentOutcome(
  tx: Queryable,
  payment: PaymentRow,
  type: 'payment.succeeded' | 'payment.declined' | 'payment.failed' | 'payment.authorized' | 'payment.captured' | 'payment.canceled' | 'payment.refunded',
): Promise<PaymentWithTransactions> {
  const now = await readForEvent(tx, payment);
  await recordEvent(tx, {
    organizationId: payment.organization_id,
    accountId: payment.account_id,
    type,
    data: { payment: toApiPayment(now.payment, now.transactions, null, { rawResponse: false }) },
    resourceId: payment.id,
  });
  return now;
}

/** payment.chargeback and payment.dispute.*: the payment and the chargeback the event is about. */
export async function recordChargebackEvent(
  tx: Queryable,
  payment: PaymentRow,
  chargeback: TransactionRow,
  type: 'payment.chargeback' | 'payment.dispute.submitted' | 'payment.dispute.won' | 'payment.dispute.lost',
): Promise<void> {
  await recordEvent(tx, {
    organizationId: payment.organization_id,
    accountId: payment.account_id,
    type,
    data: { payment: await retrievalShape(tx, payment), transaction: toApiTransaction(chargeback, { rawResponse: false }) },
    resourceId: payment.id,
  });
}

/** payment.operation.failed: a capture, cancel or refund the provider reported failed, and the payment after it was undone. */
export async function recordOperationFailedEvent(tx: Queryable, payment: PaymentRow, failed: TransactionRow): Promise<void> {
  await recordEvent(tx, {
    organizationId: payment.organization_id,
    accountId: payment.account_id,
    type: 'payment.operation.failed',
    data: { payment: await retrievalShape(tx, payment), transaction: toApiTransaction(failed, { rawResponse: false }) },
    resourceId: payment.id,
  });
}
