/**
 * A provider's later word on a card attempt (ATTEMPT_SETTLED: Adyen's AUTHORISATION), settled, the payment
 * locked, exactly as reconciliation settles what its lookup found (orchestration/settle.ts settleFoundOutcome):
 *   attempt PENDING (its outcome unknown: Adyen answered Received / Pending, or the call went unanswered)
 *       DECLINED  → recorded DECLINED with the provider's reason; the payment concludes as after a found decline
 *       SUCCEEDED → taken by a payment still waiting on it; else a late approval: recorded PENDING /
 *                   NOTIFIED_APPROVAL, due for reconciliation, which voids it at the provider without a lookup
 *                   (Adyen's replay would answer the stored Pending again) — no network call in this transaction
 *   attempt already settled with the same outcome (approved, or reversed; declined / error) → UNCHANGED
 *   attempt recorded DECLINED / ERROR (NOT_PROCESSED…) and notified approved → a conflict, money first: handled
 *                   as a late approval (NOTIFIED_APPROVAL, reversed by reconciliation), with an error log
 *   attempt approved and notified refused → left as recorded (IGNORED), with an error log
 */
import type { Queryable } from '../../db/database.js';
import { orchestrationRepository as attempts } from '../../orchestration/repository.js';
import { LATE_APPROVAL_REVERSAL_FAILED } from '../../orchestration/reversals.js';
import { isAttempt, LATE_APPROVAL_REVERSED, NOTIFIED_APPROVAL, notifiedApprovalRecord, settleFoundOutcome } from '../../orchestration/settle.js';
import type { ConnectorEvent } from '../../providers/connector.js';
import type { ProviderResult } from '../../providers/provider.js';
import { isAsyncMethod } from '../async-methods/methods.js';
import { paymentPort } from '../orchestration-port.js';
import type { Applied } from './apply.js';

type AttemptSettled = Extract<ConnectorEvent, { kind: 'ATTEMPT_SETTLED' }>;

/** The notification as the provider's result on the attempt. */
function resultOf(e: AttemptSettled): ProviderResult {
  const approved = e.outcome === 'SUCCEEDED';
  return {
    outcome: approved ? 'SUCCEEDED' : 'DECLINED',
    providerTransactionId: e.providerTransactionId,
    responseCode: approved ? 'SUCCEEDED' : 'DECLINED',
    responseMessage: approved ? 'Approved: the provider notified its decision' : (e.reason ?? 'Refused: the provider notified its decision'),
    iso8583ResponseCode: approved ? '00' : '05',
    iso8583ResponseMessage: approved ? 'Approved' : 'Do not honor',
    merchantAdviceCode: null,
    merchantAdviceCodeMessage: null,
    authorizationCode: e.authorizationCode,
    retrievalReferenceNumber: null,
    rawResponse: { notification_id: e.notificationId, outcome: e.outcome, ...(e.reason ? { reason: e.reason } : {}) },
  };
}

export async function settleAttemptByNotification(tx: Queryable, e: AttemptSettled, attemptId: string): Promise<Applied> {
  const current = await attempts.find(tx, attemptId);
  if (!current || !isAttempt(current)) return { state: 'IGNORED', detail: `no attempt ${attemptId}` };
  const payment = (await paymentPort.lockPaymentById(tx, current.payment_id))!;
  // A PIX, boleto or OXXO attempt is ended by its own AUTHORISATION (ASYNC_PAYMENT_SETTLED), never by a card's.
  if (isAsyncMethod((payment.payment_method as { type?: unknown } | null)?.type)) {
    return { state: 'IGNORED', detail: `attempt ${current.id} is an asynchronous payment's, not a card's` };
  }
  const result = resultOf(e);
  const approved = e.outcome === 'SUCCEEDED';
  const knownApproved =
    current.status === 'SUCCEEDED' ||
    (current.reason === LATE_APPROVAL_REVERSED && current.status === 'CANCELED') ||
    current.reason === NOTIFIED_APPROVAL ||
    current.reason === LATE_APPROVAL_REVERSAL_FAILED;
  const conflict = (message: string): Applied['alert'] => ({ message, paymentId: payment.id, transactionId: current.id });

  if (knownApproved) {
    if (approved) return { state: 'UNCHANGED', detail: null };
    return {
      state: 'IGNORED',
      detail: `the provider refuses attempt ${current.id}, recorded approved (${current.status}): left as recorded`,
      alert: conflict('the provider notified a refusal of an attempt recorded approved: check the payment at the provider'),
    };
  }
  if (current.status === 'PENDING') {
    const decision = await settleFoundOutcome(paymentPort, tx, payment, current, { found: true, result, voided: false });
    // Approved, but its payment cannot take it now: reconciliation takes or voids it, from this record.
    if (decision.then !== 'done') await attempts.record(tx, current.id, notifiedApprovalRecord(current, result), 0);
    return { state: 'APPLIED', detail: decision.then === 'done' ? null : 'a late approval: reconciliation settles it (takes it, or voids it at the provider)' };
  }
  if (!approved) return { state: 'UNCHANGED', detail: null };
  if (current.status !== 'DECLINED' && current.status !== 'ERROR') return { state: 'IGNORED', detail: `attempt ${current.id} is ${current.status}: nothing to settle` };
  // Recorded not approved (DECLINED, ERROR / NOT_PROCESSED…), yet the provider approved it: the shopper may be
  // charged. Reconciliation reverses it as a late approval (or takes it, should its payment still wait).
  await attempts.record(tx, current.id, notifiedApprovalRecord(current, result), 0);
  return {
    state: 'APPLIED',
    detail: `the provider approved attempt ${current.id}, recorded ${current.status}: reversed as a late approval`,
    alert: conflict(`the provider notified an approval of an attempt recorded ${current.status} (${current.response_code ?? 'no code'}): reconciliation reverses it as a late approval`),
  };
}
