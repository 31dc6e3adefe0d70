/**
 * How provider attempts and their payment are settled: shared by the request's phase C (orchestrator.ts)
 * and the reconciliation worker, so an outcome means the same whoever learns it. Every function runs in
 * the caller's short transaction with the payment row locked.
 */
import { randomUUID } from 'node:crypto';
import type { Schemas } from '@payorch/types';
import type { Queryable } from '../db/database.js';
import type { PaymentRow, PaymentWithTransactions } from '../db/payment-rows.js';
import type { ProviderLookup, ProviderResult, UnavailableKind } from '../providers/provider.js';
import { runApprovalHook } from './approval-hook.js';
import type { PaymentPort } from './payment-port.js';
import { orchestrationRepository as repo, type AttemptRecord, type AttemptRow } from './repository.js';
import { LATE_APPROVAL_REVERSAL_FAILED, MAX_REVERSALS } from './reversals.js';

/** Types of the transactions that are provider attempts of a payment (one per provider tried). */
export const ATTEMPT_TYPES: ReadonlySet<string> = new Set(['PURCHASE', 'AUTHORIZE']);
export const isAttempt = (t: { type: string }) => ATTEMPT_TYPES.has(t.type);

/** A payment whose route ended with an attempt's outcome unknown: it waits for reconciliation. */
export const IN_PROCESS = { status: 'PENDING', subStatus: 'IN_PROCESS' } as const;

/** Not decided yet: its route is running (CREATED) or it waits for reconciliation (PENDING / IN_PROCESS). */
export const isUndecided = (p: Pick<PaymentRow, 'status' | 'sub_status'>) =>
  p.status === 'CREATED' || (p.status === IN_PROCESS.status && p.sub_status === IN_PROCESS.subStatus);

/** A late approval voided at its provider because the payment ended without it (transaction CANCELED). */
export const LATE_APPROVAL_REVERSED = 'LATE_APPROVAL_REVERSED';

/**
 * An attempt the provider's notification said approved (Adyen's AUTHORISATION of a card answered Pending)
 * while its payment could not take it then (decided meanwhile, or another attempt's call running): PENDING,
 * the approval recorded, due for reconciliation, which settles it from this record without a lookup (Adyen's
 * replay would only answer Pending again): taken if the payment still waits, else reversed as a late approval.
 */
export const NOTIFIED_APPROVAL = 'NOTIFIED_APPROVAL';

/**
 * How long after a call without an answer reconciliation first asks the provider: at once. Asking early is
 * safe: an approval found is taken (or voided), and "not found" is final at once only at a provider whose
 * lookup closes the reference (PaymentProvider.lookupClosesReference: it refuses the reference from then
 * on); anywhere else "not found" is asked again until NOT_FOUND_SETTLE_MS have passed.
 */
export const FIRST_LOOKUP_DELAY_MS = 0;

/**
 * How long after an operation was sent a "not found" lookup is final at a provider whose lookup does not
 * close the reference (Mercado Pago's search is eventually consistent and a payment still processing is not
 * in it; Adyen's idempotent replay cannot tell "never" from "not yet"). Before that the transaction stays
 * PENDING and is asked again (back-off), so a late approval is still found and voided. Configurable as
 * RECONCILIATION_NOT_FOUND_SETTLE_MS.
 */
export const NOT_FOUND_SETTLE_MS = 15 * 60_000;

const PROVIDER_STATUS = { SUCCEEDED: 'APPROVED', DECLINED: 'DECLINED', ERROR: 'ERROR' } as const;

export function providerDataOf(providerId: string | null, r: ProviderResult | null): Omit<Schemas['ProviderData'], 'raw_response'> {
  return {
    id: providerId,
    transaction_id: r?.providerTransactionId ?? null,
    account_id: null,
    status: r ? PROVIDER_STATUS[r.outcome] : null,
    sub_status: null,
    status_detail: r?.responseCode ?? null,
    response_message: r?.iso8583ResponseMessage ?? null,
    response_code: r?.iso8583ResponseCode ?? null,
    third_party_transaction_id: null,
    third_party_account_id: null,
    iso8583_response_code: r?.iso8583ResponseCode ?? null,
    iso8583_response_message: r?.iso8583ResponseMessage ?? null,
    merchant_advice_code: r?.merchantAdviceCode ?? null,
    merchant_advice_code_message: r?.merchantAdviceCodeMessage ?? null,
    reason_code: null,
    reason_description: null,
  };
}

/** The provider's answer as the attempt records it (status = the provider's outcome). */
export function answeredRecord(attempt: Pick<AttemptRow, 'provider_id'>, r: ProviderResult, paymentMethod: unknown = null): AttemptRecord {
  return {
    status: r.outcome,
    reason: null,
    response_code: r.responseCode,
    response_message: r.responseMessage,
    provider_data: providerDataOf(attempt.provider_id, r),
    raw_response: r.rawResponse,
    provider_transaction_id: r.providerTransactionId,
    merchant_advice_code: r.merchantAdviceCode,
    merchant_advice_code_message: r.merchantAdviceCodeMessage,
    payment_method: paymentMethod,
  };
}

const NO_ANSWER: Record<UnavailableKind, string> = {
  NOT_SENT: 'The provider could not be reached: the request was not sent',
  TIMEOUT: 'No answer from the provider within the connection timeout; its outcome is being reconciled',
  CONNECTION_CUT: 'The connection to the provider broke before its answer; its outcome is being reconciled',
  BAD_RESPONSE: 'The provider answered unreadably; its outcome is being reconciled',
};

/**
 * A call without a usable answer. NOT_SENT certainly did nothing: ERROR, settled. The others may have
 * been processed: the attempt stays PENDING and reconciliation asks the provider by reference.
 */
export function unansweredRecord(attempt: Pick<AttemptRow, 'provider_id'>, kind: UnavailableKind): { record: AttemptRecord; reconcileInMs: number | null } {
  return {
    record: withoutAnswer(attempt, kind === 'NOT_SENT' ? 'ERROR' : 'PENDING', kind === 'NOT_SENT' ? 'PROVIDER_NOT_REACHED' : `PROVIDER_${kind}`, NO_ANSWER[kind]),
    reconcileInMs: kind === 'NOT_SENT' ? null : FIRST_LOOKUP_DELAY_MS,
  };
}

/** What reconciliation records when the provider has no trace of the reference and never will (closed, or the settle window passed): it never processed it. */
export function notProcessedRecord(attempt: Pick<AttemptRow, 'provider_id'>): AttemptRecord {
  return withoutAnswer(attempt, 'ERROR', 'NOT_PROCESSED', 'The provider has no record of this attempt: it never reached the provider and nothing was charged');
}

/** An attempt's record when the provider gave no answer to keep: our code and message, nothing of the provider's. */
function withoutAnswer(attempt: Pick<AttemptRow, 'provider_id'>, status: 'ERROR' | 'PENDING', code: string, message: string): AttemptRecord {
  return {
    status,
    reason: null,
    response_code: code,
    response_message: message,
    provider_data: providerDataOf(attempt.provider_id, null),
    raw_response: null,
    provider_transaction_id: null,
    merchant_advice_code: null,
    merchant_advice_code_message: null,
    payment_method: null,
  };
}

/** A notified approval its payment could not take now (NOTIFIED_APPROVAL): PENDING with the approval recorded. */
export function notifiedApprovalRecord(attempt: Pick<AttemptRow, 'provider_id'>, approval: ProviderResult): AttemptRecord {
  return { ...answeredRecord(attempt, approval), status: 'PENDING', reason: NOTIFIED_APPROVAL, payment_method: null };
}

/**
 * The approval a PENDING attempt already records, as the provider's result reconciliation settles it with
 * (no lookup): a notified approval its payment could not take (NOTIFIED_APPROVAL), or a late approval whose
 * reversal failed (LATE_APPROVAL_REVERSAL_FAILED: it was found approved before). Null for any other: a lookup
 * decides. Asking again would add nothing, and at Adyen a replay of a Pending answer says Pending for ever.
 */
export function knownApprovalOf(attempt: AttemptRow): ProviderResult | null {
  const known = attempt.reason === NOTIFIED_APPROVAL || attempt.reason === LATE_APPROVAL_REVERSAL_FAILED;
  if (attempt.status !== 'PENDING' || !known || !attempt.provider_transaction_id) return null;
  const data = (attempt.provider_data ?? {}) as { iso8583_response_code?: string | null; iso8583_response_message?: string | null };
  // A failed reversal's record says why the reversal failed, not what the approval was.
  const notified = attempt.reason === NOTIFIED_APPROVAL;
  return {
    outcome: 'SUCCEEDED',
    providerTransactionId: attempt.provider_transaction_id,
    responseCode: (notified ? attempt.response_code : null) ?? 'SUCCEEDED',
    responseMessage: (notified ? attempt.response_message : null) ?? 'Approved',
    iso8583ResponseCode: data.iso8583_response_code ?? '00',
    iso8583ResponseMessage: data.iso8583_response_message ?? 'Approved',
    merchantAdviceCode: attempt.merchant_advice_code,
    merchantAdviceCodeMessage: attempt.merchant_advice_code_message,
    authorizationCode: null,
    retrievalReferenceNumber: null,
    rawResponse: (attempt.raw_response ?? {}) as Record<string, unknown>,
  };
}

/** A late approval voided at its provider: kept as CANCELED with its reason (the card was never charged in the end). */
export function reversedRecord(attempt: Pick<AttemptRow, 'provider_id'>, approval: ProviderResult): AttemptRecord {
  return {
    ...answeredRecord(attempt, approval),
    status: 'CANCELED',
    reason: LATE_APPROVAL_REVERSED,
    response_message: 'Approved after the payment had ended without it: voided at the provider',
  };
}

/**
 * A late approval whose reversal the provider reported failed (orchestration/reversals.ts): it does not read
 * reversed. PENDING while reconciliation is to reverse it again, ERROR once it gave up (an operator's then);
 * what the provider answered of the approval (its id, data) stays.
 */
export function reversalFailedRecord(attempt: AttemptRecord, message: string, retried: boolean): AttemptRecord {
  return {
    ...attempt,
    status: retried ? 'PENDING' : 'ERROR',
    reason: LATE_APPROVAL_REVERSAL_FAILED,
    response_code: 'FAILED_AT_PROVIDER',
    response_message: retried
      ? `The provider reported that the reversal of this late approval failed (${message}): it is reversed again`
      : `The provider reported that the reversal of this late approval failed (${message}), ${MAX_REVERSALS} times: it needs reversing at the provider by hand`,
    payment_method: null,
  };
}

/** The payment's method with what the approving provider answered (authorization code, reference number). */
export function withAuthorization(paymentMethod: unknown, r: ProviderResult): unknown {
  const m = paymentMethod as Schemas['PaymentMethod'] | null;
  if (!m?.payment_method_detail?.card) return paymentMethod;
  return {
    ...m,
    payment_method_detail: {
      ...m.payment_method_detail,
      card: { ...m.payment_method_detail.card, authorization_code: r.authorizationCode, retrieval_reference_number: r.retrievalReferenceNumber },
    },
  };
}

/**
 * The payment takes an approval: SUCCEEDED / APPROVED (captured) for a purchase, PENDING / AUTHORIZED for an
 * authorization; its history and event, and the vaulted card's record. The attempt is recorded already.
 * Returns the payment with its transactions as its event shows them (nothing here changes them after it).
 */
export async function takeApproval(
  /** Payments' side (payments/orchestration-port.ts): the move, its event, the vaulted card's record. */
  payments: PaymentPort,
  tx: Queryable,
  payment: PaymentRow,
  attempt: AttemptRow,
  paymentMethod: unknown,
  /** The vaulted card the payment was made with, if any (its record notes the use). */
  vaultedToken: string | null,
  /**
   * false when the caller knows the payment used no one-time token: only a token's payment can pay a
   * payment link (checkout), so the link's lookup is skipped (one read less in every card approval).
   */
  options: { mayPayLink: boolean } = { mayPayLink: true },
): Promise<PaymentWithTransactions> {
  const capture = attempt.type === 'PURCHASE';
  const states = capture ? { status: 'SUCCEEDED', subStatus: 'APPROVED' } : { status: 'PENDING', subStatus: 'AUTHORIZED' };
  const updated = await payments.movePayment(
    tx,
    payment.id,
    { ...states, paymentMethod, captured: capture ? payment.amount_value : '0' },
    { transactionId: attempt.id, transactionStatus: 'SUCCEEDED', reason: null },
  );
  const approved = await payments.recordPaymentOutcome(tx, updated, capture ? 'payment.succeeded' : 'payment.authorized');
  // A payment through a payment link: the link records it and announces payment_link.paid (checkout's
  // onPaymentApproved, handed over at start: approval-hook.ts).
  if (options.mayPayLink) await runApprovalHook(tx, updated);
  if (vaultedToken) await payments.markVaultedCardUsed(tx, vaultedToken, true);
  return approved;
}

/**
 * Ends a payment none of whose attempts was approved, once none is in flight: DECLINED when an issuer
 * declined it anywhere, else ERROR (no provider could process it). While an attempt's outcome is unknown
 * the payment waits as PENDING / IN_PROCESS instead (it may have been charged there). `paymentMethod`:
 * the method with the last answer's data, when the caller has it.
 */
export async function concludeWithoutApproval(
  payments: PaymentPort,
  tx: Queryable,
  payment: PaymentRow,
  vaultedToken: string | null,
  paymentMethod?: unknown,
): Promise<PaymentRow> {
  const attempts = (await repo.transactionsOf(tx, payment.id)).filter(isAttempt);
  if (!isUndecided(payment) || attempts.some((a) => a.status === 'SUCCEEDED')) return payment;
  const last = attempts.at(-1);
  // Another attempt's call is still running: the route decides when it returns (its phase C).
  if (attempts.some((a) => a.in_flight)) return payment;
  if (attempts.some((a) => a.status === 'PENDING')) {
    if (payment.status === IN_PROCESS.status) return payment;
    const waiting = await payments.updatePayment(tx, payment.id, { ...IN_PROCESS, paymentMethod });
    await payments.insertHistory(tx, {
      id: randomUUID(),
      paymentId: payment.id,
      ...IN_PROCESS,
      transactionId: last?.id ?? null,
      transactionStatus: last?.status ?? null,
      reason: last?.response_code ?? null,
    });
    return waiting;
  }
  const declined = [...attempts].reverse().find((a) => a.status === 'DECLINED');
  const deciding = declined ?? last;
  const status = declined ? 'DECLINED' : 'ERROR';
  const ended = await payments.updatePayment(tx, payment.id, { status, subStatus: status, paymentMethod });
  await payments.insertHistory(tx, {
    id: randomUUID(),
    paymentId: payment.id,
    status,
    subStatus: status,
    transactionId: deciding?.id ?? null,
    transactionStatus: deciding?.status ?? null,
    reason: deciding?.response_code ?? null,
  });
  // Every end is announced: ERROR too (a merchant told 201 PENDING / IN_PROCESS learns of it only this way).
  await payments.recordPaymentOutcome(tx, ended, declined ? 'payment.declined' : 'payment.failed');
  if (declined) {
    // (An ERROR is the providers' failure, not the card's: the vault records nothing.)
    if (vaultedToken) await payments.markVaultedCardUsed(tx, vaultedToken, false);
  }
  return ended;
}

/** What becomes of an attempt whose outcome was unknown once the provider's word on it is known (settleFoundOutcome). */
export type FoundDecision =
  | { then: 'done' }
  /** Another attempt of its payment is in flight: its route decides first; settle it again later. */
  | { then: 'wait' }
  /** Approved after its payment was approved elsewhere or ended: to be voided at its provider (reconciliation). */
  | { then: 'void'; payment: PaymentRow; approval: ProviderResult; failedBefore: number };

export const vaultedTokenOf = (p: PaymentRow) => (p.payment_method as { vaulted_token?: string | null } | null)?.vaulted_token ?? null;

/**
 * Settles a PENDING attempt with what its provider says of it — a lookup's finding (reconciliation.ts) or a
 * notification's (payments/provider-notifications/attempts.ts) — in the caller's transaction, the payment
 * locked: not found → NOT_PROCESSED; declined, error or voided → recorded, the payment concluded without it;
 * approved → taken by a payment still waiting on it, else a late approval to void (returned, not done here:
 * no network call inside a transaction).
 */
export async function settleFoundOutcome(payments: PaymentPort, tx: Queryable, payment: PaymentRow, current: AttemptRow, lookup: ProviderLookup): Promise<FoundDecision> {
  if (!lookup.found) {
    await repo.record(tx, current.id, notProcessedRecord(current), null);
    await concludeWithoutApproval(payments, tx, payment, vaultedTokenOf(payment));
    return { then: 'done' };
  }
  const r = lookup.result;
  if (lookup.voided || r.outcome !== 'SUCCEEDED') {
    await repo.record(tx, current.id, lookup.voided && r.outcome === 'SUCCEEDED' ? reversedRecord(current, r) : answeredRecord(current, r), null);
    await concludeWithoutApproval(payments, tx, payment, vaultedTokenOf(payment));
    return { then: 'done' };
  }
  const attempts = (await repo.transactionsOf(tx, current.payment_id)).filter((a) => isAttempt(a) && a.id !== current.id);
  // The payment's route is still running (another attempt's call is in flight): it decides first.
  if (attempts.some((a) => a.in_flight)) return { then: 'wait' };
  if (isUndecided(payment) && !attempts.some((a) => a.status === 'SUCCEEDED')) {
    const paymentMethod = withAuthorization(payment.payment_method, r);
    const approved = await repo.record(tx, current.id, answeredRecord(current, r, withAuthorization(current.payment_method, r)), null);
    await takeApproval(payments, tx, payment, approved, paymentMethod, vaultedTokenOf(payment));
    return { then: 'done' };
  }
  if (current.reversals_failed >= MAX_REVERSALS) {
    // Never left PENDING after its last failed reversal (provider-notifications/reversals.ts): an operator's now.
    await repo.record(tx, current.id, reversalFailedRecord(current, 'reported failed', false), null);
    return { then: 'done' };
  }
  return { then: 'void', payment, approval: r, failedBefore: current.reversals_failed };
}
