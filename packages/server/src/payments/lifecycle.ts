/**
 * Capture, cancel (void), refund and cancel-or-refund of a payment (docs/design.md §5, Yuno's operations):
 *   PENDING / AUTHORIZED  --capture all-->   SUCCEEDED / CAPTURED            (transaction CAPTURE)
 *                         --capture part-->  SUCCEEDED / PARTIALLY_CAPTURED  (the rest is released)
 *                         --cancel-->        CANCELED / CANCELED             (transaction CANCEL)
 *   SUCCEEDED / *         --refund part-->   SUCCEEDED / PARTIALLY_REFUNDED  (transaction REFUND)
 *                         --refund rest-->   REFUNDED / REFUNDED
 * Each runs in the operation's one transaction (with its idempotency record) with the payment row
 * locked, so concurrent refunds are decided one after another against what is left. The provider is
 * asked before anything is written; a refusal answers 422 PROVIDER_DECLINED and the payment stays as it was.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import { problem } from '../http/problems.js';
import type { PaymentProvider, ProviderResult } from '../providers/provider.js';
import { recordPaymentOutcome } from './events.js';
import { toApiPayment } from './mapper.js';
import { addDecimal, compareDecimal, subtractDecimal, toDecimal } from './money.js';
import { connectionDataOf, providerDataOf, providerLabel } from './provider-data.js';
import { paymentsRepository as repo, type PaymentRow, type TransactionRow } from './repository.js';

export type LifecycleProblem =
  | ReturnType<typeof problem<'PAYMENT_NOT_FOUND'>>
  | ReturnType<typeof problem<'TRANSACTION_NOT_FOUND'>>
  | ReturnType<typeof problem<'INVALID_STATUS'>>
  | ReturnType<typeof problem<'CHARGEBACK_IN_PROCESS'>>
  | ReturnType<typeof problem<'INVALID_AMOUNT'>>
  | ReturnType<typeof problem<'PROVIDER_DECLINED'>>;

export type LifecycleOutcome = { ok: true; payment: Schemas['Payment'] } | { ok: false; problem: LifecycleProblem };

type Amount = Schemas['TransactionAmountRequest'];
interface Details {
  merchant_reference?: string;
  reason?: string;
  description?: string;
}
interface Scope {
  organizationId: string;
  paymentId: string;
}

const fail = (p: LifecycleProblem): LifecycleOutcome => ({ ok: false, problem: p });
const invalidStatus = (detail: string) => fail(problem('INVALID_STATUS', detail));
const state = (p: PaymentRow) => `${p.status} / ${p.sub_status}`;
const isUncapturedAuthorization = (p: PaymentRow) => p.status === 'PENDING' && p.sub_status === 'AUTHORIZED';

/** The payment (locked) and the named transaction of it, or the 404 that fits. */
async function load(db: Queryable, scope: Scope, transactionId: string) {
  const payment = await repo.findPayment(db, scope.organizationId, scope.paymentId, { forUpdate: true });
  if (!payment) return { problem: problem('PAYMENT_NOT_FOUND', `No payment ${scope.paymentId}.`) };
  const transaction = await repo.findTransaction(db, payment.id, transactionId);
  if (!transaction) return { problem: problem('TRANSACTION_NOT_FOUND', `Payment ${payment.id} has no transaction ${transactionId}.`) };
  return { payment, transaction };
}

/**
 * The requested amount as exact decimal text, or the problem: the payment's currency only, its
 * minor-unit decimals, at most `limit` (what is left to capture or refund). Absent means `limit`.
 */
function amountWithin(payment: PaymentRow, requested: Amount | undefined, limit: string, what: string): { ok: true; value: string } | { ok: false; problem: LifecycleProblem } {
  if (requested === undefined) return { ok: true, value: limit };
  const bad = (message: string, path = '/body/amount/value') =>
    ({ ok: false, problem: problem('INVALID_AMOUNT', `The amount ${message}.`, { errors: [{ path, message }] }) }) as const;
  if (requested.currency !== payment.currency) return bad(`must be in the payment's currency ${payment.currency}, not ${requested.currency}`, '/body/amount/currency');
  const checked = toDecimal(requested.value, payment.currency);
  if (!checked.ok) return bad(checked.message);
  if (compareDecimal(checked.decimal, limit) > 0) return bad(`must not exceed ${limit} ${payment.currency}, what is left to ${what}`);
  return { ok: true, value: checked.decimal };
}

/** The provider's refusal, with its reason; nothing was written yet, so the payment is as it was. */
function declined(result: ProviderResult, what: string): LifecycleOutcome {
  return fail(
    problem('PROVIDER_DECLINED', `The provider refused the ${what}: ${result.responseCode} (${result.responseMessage}). The payment is unchanged.`, {
      messages: [`${result.responseCode}: ${result.responseMessage}`],
    }),
  );
}

/** Records the provider's answer as a new transaction of the payment, following `original`. */
async function insertFollowUp(
  db: Queryable,
  provider: PaymentProvider,
  payment: PaymentRow,
  original: TransactionRow,
  t: { id: string; type: 'CAPTURE' | 'CANCEL' | 'REFUND'; amount: string; details: Details; result: ProviderResult },
): Promise<TransactionRow> {
  return repo.insertTransaction(db, {
    id: t.id,
    payment_id: payment.id,
    type: t.type,
    status: 'SUCCEEDED',
    category: original.category,
    amount: t.amount,
    provider_id: providerLabel(provider),
    payment_method: original.payment_method,
    response_code: t.result.responseCode,
    response_message: t.result.responseMessage,
    reason: t.details.reason ?? null,
    description: t.details.description ?? null,
    merchant_reference: t.details.merchant_reference ?? payment.merchant_order_id,
    provider_data: providerDataOf(provider, t.result),
    raw_response: t.result.rawResponse,
    provider_transaction_id: t.result.providerTransactionId,
    connection_data: connectionDataOf(provider),
    merchant_advice_code: t.result.merchantAdviceCode,
    merchant_advice_code_message: t.result.merchantAdviceCodeMessage,
    payment_status_before: payment.status,
    payment_sub_status_before: payment.sub_status,
  });
}

async function finish(
  db: Queryable,
  payment: PaymentRow,
  transaction: TransactionRow,
  next: { status: string; subStatus: string; captured?: string; refunded?: string },
  event: 'payment.captured' | 'payment.canceled' | 'payment.refunded',
): Promise<LifecycleOutcome> {
  const updated = await repo.updatePayment(db, payment.id, next);
  await repo.insertHistory(db, {
    id: randomUUID(),
    paymentId: payment.id,
    status: next.status,
    subStatus: next.subStatus,
    transactionId: transaction.id,
    transactionStatus: transaction.status,
    reason: transaction.reason,
  });
  await recordPaymentOutcome(db, updated, event);
  return { ok: true, payment: toApiPayment(updated, await repo.listTransactions(db, payment.id), null, { rawResponse: false }) };
}

export async function capturePayment(db: Queryable, provider: PaymentProvider, scope: Scope, transactionId: string, body: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  const found = await load(db, scope, transactionId);
  if (!found.payment) return fail(found.problem);
  const { payment, transaction: auth } = found;
  if (auth.type !== 'AUTHORIZE' || auth.status !== 'SUCCEEDED') return invalidStatus(`Transaction ${auth.id} is a ${auth.type} (${auth.status}); only a successful AUTHORIZE can be captured.`);
  // One capture per authorization: once captured (in part or whole) the rest was released.
  if (!isUncapturedAuthorization(payment)) return invalidStatus(`The payment is ${state(payment)}; a capture needs PENDING / AUTHORIZED (one capture per authorization).`);
  const amount = amountWithin(payment, body.amount, auth.amount, 'capture');
  if (!amount.ok) return fail(amount.problem);

  const id = randomUUID();
  const result = await provider.capture({ providerTransactionId: auth.provider_transaction_id!, amount: amount.value, currency: payment.currency, reference: id });
  if (result.outcome !== 'SUCCEEDED') return declined(result, 'capture');
  const capture = await insertFollowUp(db, provider, payment, auth, { id, type: 'CAPTURE', amount: amount.value, details: body, result });
  const full = compareDecimal(amount.value, auth.amount) === 0;
  return finish(db, payment, capture, { status: 'SUCCEEDED', subStatus: full ? 'CAPTURED' : 'PARTIALLY_CAPTURED', captured: amount.value }, 'payment.captured');
}

export async function cancelPayment(db: Queryable, provider: PaymentProvider, scope: Scope, transactionId: string, body: Details): Promise<LifecycleOutcome> {
  const found = await load(db, scope, transactionId);
  if (!found.payment) return fail(found.problem);
  return voidAuthorization(db, provider, found.payment, found.transaction, body);
}

async function voidAuthorization(db: Queryable, provider: PaymentProvider, payment: PaymentRow, auth: TransactionRow, body: Details): Promise<LifecycleOutcome> {
  if (auth.type !== 'AUTHORIZE' || auth.status !== 'SUCCEEDED') return invalidStatus(`Transaction ${auth.id} is a ${auth.type} (${auth.status}); only a successful AUTHORIZE can be canceled.`);
  if (!isUncapturedAuthorization(payment)) {
    return invalidStatus(`The payment is ${state(payment)}; only an authorization not yet captured (PENDING / AUTHORIZED) can be canceled: refund captured money instead.`);
  }
  const id = randomUUID();
  const result = await provider.void({ providerTransactionId: auth.provider_transaction_id!, amount: auth.amount, currency: payment.currency, reference: id });
  if (result.outcome !== 'SUCCEEDED') return declined(result, 'cancellation');
  const cancel = await insertFollowUp(db, provider, payment, auth, { id, type: 'CANCEL', amount: auth.amount, details: body, result });
  return finish(db, payment, cancel, { status: 'CANCELED', subStatus: 'CANCELED' }, 'payment.canceled');
}

export async function refundPayment(db: Queryable, provider: PaymentProvider, scope: Scope, transactionId: string, body: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  const found = await load(db, scope, transactionId);
  if (!found.payment) return fail(found.problem);
  return refundCaptured(db, provider, found.payment, found.transaction, body);
}

const REFUNDABLE_TYPES = new Set(['PURCHASE', 'AUTHORIZE', 'CAPTURE']);

async function refundCaptured(db: Queryable, provider: PaymentProvider, payment: PaymentRow, original: TransactionRow, body: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  if (!REFUNDABLE_TYPES.has(original.type) || original.status !== 'SUCCEEDED') {
    return invalidStatus(`Transaction ${original.id} is a ${original.type} (${original.status}); refund the payment's successful PURCHASE or CAPTURE.`);
  }
  // Money under an open chargeback is the issuer's to decide; refunding it too would pay the customer twice.
  if (payment.status === 'IN_DISPUTE') {
    return fail(problem('CHARGEBACK_IN_PROCESS', `The payment is ${state(payment)}: a chargeback is open; it can be refunded once the dispute is decided.`));
  }
  const left = subtractDecimal(payment.amount_captured, payment.amount_refunded);
  if (payment.status !== 'SUCCEEDED' || compareDecimal(left, '0') <= 0) {
    return invalidStatus(`The payment is ${state(payment)} with ${left} ${payment.currency} captured and not refunded; a refund needs captured money (SUCCEEDED).`);
  }
  const amount = amountWithin(payment, body.amount, left, 'refund');
  if (!amount.ok) return fail(amount.problem);

  const id = randomUUID();
  // The provider knows the card transaction: the purchase, or the authorization that was captured.
  const charged = original.type === 'CAPTURE' ? ((await repo.listTransactions(db, payment.id)).find((t) => t.type === 'AUTHORIZE') ?? original) : original;
  const result = await provider.refund({ providerTransactionId: charged.provider_transaction_id!, amount: amount.value, currency: payment.currency, reference: id });
  if (result.outcome !== 'SUCCEEDED') return declined(result, 'refund');
  const refund = await insertFollowUp(db, provider, payment, original, { id, type: 'REFUND', amount: amount.value, details: body, result });
  const refunded = addDecimal(payment.amount_refunded, amount.value);
  const all = compareDecimal(refunded, payment.amount_captured) === 0;
  return finish(db, payment, refund, { status: all ? 'REFUNDED' : 'SUCCEEDED', subStatus: all ? 'REFUNDED' : 'PARTIALLY_REFUNDED', refunded }, 'payment.refunded');
}

/** Undoes the payment as its state allows: voids an uncaptured authorization, refunds captured money. */
export async function cancelOrRefundPayment(db: Queryable, provider: PaymentProvider, scope: Scope, body: Details & { amount?: Amount }): Promise<LifecycleOutcome> {
  const payment = await repo.findPayment(db, scope.organizationId, scope.paymentId, { forUpdate: true });
  if (!payment) return fail(problem('PAYMENT_NOT_FOUND', `No payment ${scope.paymentId}.`));
  const transactions = await repo.listTransactions(db, payment.id);
  if (isUncapturedAuthorization(payment)) {
    const auth = transactions.find((t) => t.type === 'AUTHORIZE' && t.status === 'SUCCEEDED');
    if (!auth) return invalidStatus(`The payment is ${state(payment)} without a successful authorization.`);
    // A void releases the whole authorization; an amount, if given, must say so.
    const amount = amountWithin(payment, body.amount, auth.amount, 'cancel');
    if (!amount.ok) return fail(amount.problem);
    if (compareDecimal(amount.value, auth.amount) !== 0) {
      return fail(problem('INVALID_AMOUNT', `An authorization is canceled whole (${auth.amount} ${payment.currency}); capture it first to refund part of it.`, {
        errors: [{ path: '/body/amount/value', message: `must be ${auth.amount} or absent` }],
      }));
    }
    return voidAuthorization(db, provider, payment, auth, body);
  }
  const charged = [...transactions].reverse().find((t) => (t.type === 'CAPTURE' || t.type === 'PURCHASE') && t.status === 'SUCCEEDED');
  if (!charged) return invalidStatus(`The payment is ${state(payment)}: nothing is authorized or captured.`);
  return refundCaptured(db, provider, payment, charged, body);
}
