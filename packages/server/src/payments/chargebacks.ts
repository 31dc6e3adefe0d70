/**
 * Chargebacks arrive as signed provider notifications. One function processes them, whether they came
 * over HTTP (POST /providers/{provider_id}/notifications) or from the sandbox acquirer in-process: the
 * signature is checked over the raw body first (nothing is written for a bad one), the notification id
 * is recorded in the same transaction as its effect (a repeated id changes nothing), and the payment
 * gets a CHARGEBACK transaction (CREATED) and moves to IN_DISPUTE / RECEIVED.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { problem } from '../http/problems.js';
import { NotificationSignatureError, type ChargebackEvent, type PaymentProvider, type WebhookHeaders } from '../providers/provider.js';
import { recordChargebackEvent } from './events.js';
import { compareDecimal, toDecimal } from './money.js';
import { paymentsRepository as repo, type PaymentRow, type TransactionRow } from './repository.js';
import { connectionDataOf, providerLabel } from './provider-data.js';

export type NotificationProblem =
  | ReturnType<typeof problem<'NOT_FOUND'>>
  | ReturnType<typeof problem<'INVALID_CREDENTIALS'>>
  | ReturnType<typeof problem<'PAYMENT_NOT_FOUND'>>
  | ReturnType<typeof problem<'TRANSACTION_NOT_FOUND'>>
  | ReturnType<typeof problem<'INVALID_STATUS'>>
  | ReturnType<typeof problem<'INVALID_REQUEST'>>;

export type NotificationOutcome =
  | { kind: 'processed'; payment: PaymentRow; transaction: TransactionRow }
  | { kind: 'duplicate' }
  | { kind: 'rejected'; problem: NotificationProblem };

/** Statuses a payment can be charged back from: money was captured and no chargeback is open. */
const CHARGEABLE = new Set(['SUCCEEDED']);

/** A chargeback the payment's state or amounts refuse; thrown before anything is written. */
export class Rejected extends Error {
  constructor(readonly problem: NotificationProblem) {
    super('notification rejected');
  }
}

export async function receiveNotification(
  db: Database | Queryable,
  provider: PaymentProvider,
  providerId: string,
  rawBody: string | undefined,
  headers: Partial<WebhookHeaders>,
): Promise<NotificationOutcome> {
  if (providerId !== (provider.notificationSource ?? provider.id)) {
    return { kind: 'rejected', problem: problem('NOT_FOUND', `No provider ${providerId} sends notifications here.`) };
  }
  let event: ChargebackEvent;
  try {
    if (rawBody === undefined) throw new NotificationSignatureError('no signed body');
    event = await provider.parseNotification(rawBody, headers);
  } catch (err) {
    if (!(err instanceof NotificationSignatureError)) throw err;
    return {
      kind: 'rejected',
      problem: problem('INVALID_CREDENTIALS', 'The notification signature is missing, wrong or outside the accepted time window.'),
    };
  }

  try {
    return await db.transaction(async (tx) => {
      const fresh = await repo.recordNotification(tx, { providerId, notificationId: event.notificationId, type: event.kind, payload: event.raw });
      if (!fresh) return { kind: 'duplicate' } as const;
      return applyChargeback(tx, provider, event);
    });
  } catch (err) {
    // The transaction rolled back: the notification is not recorded, so a corrected resend is processed.
    if (err instanceof Rejected) return { kind: 'rejected', problem: err.problem };
    throw err;
  }
}

/**
 * The chargeback applied to the payment `event.paymentId` (locked here). `via`: the connection it came
 * through (provider notifications per connection), recorded on the chargeback transaction so its outcome
 * is found by that connection only. Throws Rejected before any write.
 */
export async function applyChargeback(
  tx: Queryable,
  provider: PaymentProvider,
  event: ChargebackEvent,
  via?: { connectionId: string },
): Promise<{ kind: 'processed'; payment: PaymentRow; transaction: TransactionRow }> {
  const payment = await repo.lockPaymentById(tx, event.paymentId);
  if (!payment) throw new Rejected(problem('PAYMENT_NOT_FOUND', `No payment ${event.paymentId}.`));

  const transactions = await repo.listTransactions(tx, payment.id);
  // The card transaction charged back: a purchase, or an authorization that was captured later.
  const purchase = transactions.find((t) => (t.type === 'PURCHASE' || t.type === 'AUTHORIZE') && t.provider_transaction_id === event.providerTransactionId);
  if (!purchase) {
    throw new Rejected(
      // A schema-valid notification naming a purchase we don't have: the transaction is unknown (404).
      problem('TRANSACTION_NOT_FOUND', `Payment ${payment.id} has no purchase ${event.providerTransactionId} at this provider.`, {
        errors: [{ path: '/body/data/provider_transaction_id', message: 'is not a purchase of this payment' }],
      }),
    );
  }
  if (!CHARGEABLE.has(payment.status) || purchase.status !== 'SUCCEEDED') {
    throw new Rejected(problem('INVALID_STATUS', `Payment ${payment.id} is ${payment.status} / ${payment.sub_status}; a chargeback needs a SUCCEEDED payment.`));
  }
  const amount = toDecimal(Number(event.amount), payment.currency);
  if (!amount.ok) {
    throw new Rejected(problem('INVALID_REQUEST', `The chargeback amount ${amount.message}.`, { errors: [{ path: '/body/data/amount', message: amount.message }] }));
  }
  const chargeable = payment.amount_captured;
  if (compareDecimal(amount.decimal, chargeable) > 0) {
    const message = `must not exceed the captured amount ${chargeable}`;
    throw new Rejected(problem('INVALID_REQUEST', `The chargeback amount ${message}.`, { errors: [{ path: '/body/data/amount', message }] }));
  }

  const chargeback = await repo.insertTransaction(tx, {
    id: randomUUID(),
    payment_id: payment.id,
    type: 'CHARGEBACK',
    status: 'CREATED',
    category: purchase.category,
    amount: amount.decimal,
    provider_id: providerLabel(provider),
    payment_method: purchase.payment_method,
    response_code: null,
    response_message: null,
    reason: event.reason,
    description: 'Chargeback received from the provider',
    merchant_reference: null,
    provider_data: {
      id: providerLabel(provider),
      transaction_id: event.chargebackId,
      account_id: null,
      status: 'CHARGEBACK',
      sub_status: null,
      status_detail: null,
      response_message: null,
      response_code: null,
      third_party_transaction_id: null,
      third_party_account_id: null,
      iso8583_response_code: null,
      iso8583_response_message: null,
      merchant_advice_code: null,
      merchant_advice_code_message: null,
      reason_code: event.reasonCode,
      reason_description: event.reasonDescription,
    },
    raw_response: event.rawBody,
    provider_transaction_id: event.chargebackId,
    connection_data: via ? purchase.connection_data : connectionDataOf(provider),
    merchant_advice_code: null,
    merchant_advice_code_message: null,
    payment_status_before: payment.status,
    payment_sub_status_before: payment.sub_status,
  });
  if (via) await repo.setConnection(tx, chargeback.id, via.connectionId);
  const updated = await repo.updatePayment(tx, payment.id, { status: 'IN_DISPUTE', subStatus: 'RECEIVED' });
  await repo.insertHistory(tx, {
    id: randomUUID(),
    paymentId: payment.id,
    status: 'IN_DISPUTE',
    subStatus: 'RECEIVED',
    transactionId: chargeback.id,
    transactionStatus: 'CREATED',
    reason: event.reason,
  });
  await recordChargebackEvent(tx, updated, chargeback, 'payment.chargeback');
  return { kind: 'processed', payment: updated, transaction: chargeback };
}
