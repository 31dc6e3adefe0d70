/**
 * A provider's later word on a capture, cancel or refund it had answered (FOLLOW_UP_SETTLED):
 *   transaction PENDING   (its answer not recorded yet)  CONFIRMED → settled as approved (settleFollowUp)
 *                                                        FAILED    → settled as DECLINED, reservation released
 *   transaction SUCCEEDED (the provider had accepted it) CONFIRMED → nothing changes (recorded UNCHANGED)
 *                                                        FAILED    → undone: DECLINED / FAILED_AT_PROVIDER,
 *                                                                    the payment as it was before it
 *   transaction ERROR     (NOT_PROCESSED: "not found" became final; or an error answer)
 *                                                        CONFIRMED → applied late if the payment can still take it (SUCCEEDED,
 *                                                                    the payment changed, its event); else left as recorded,
 *                                                                    IGNORED with an error log (lifecycle.ts lateAnswer)
 *   transaction DECLINED  (the provider refused it)      CONFIRMED → left as recorded, IGNORED with an error log
 *   transaction DECLINED / ERROR                         FAILED    → nothing changes
 * Every failure is announced as payment.operation.failed. The caller holds the payment's lock.
 * The outcome of a late approval's reversal, found by its attempt, is settled by reversals.ts.
 */
import type { Queryable } from '../../db/database.js';
import { orchestrationRepository as attempts } from '../../orchestration/repository.js';
import { isAttempt } from '../../orchestration/settle.js';
import type { ConnectorEvent } from '../../providers/connector.js';
import type { ProviderResult } from '../../providers/provider.js';
import { recordOperationFailedEvent } from '../events.js';
import { settleFollowUp } from '../lifecycle.js';
import { compareDecimal, subtractDecimal } from '../money.js';
import { capturedState } from '../refund-state.js';
import { paymentsRepository as repo, type PaymentRow, type TransactionRow } from '../repository.js';
import { notificationsRepository as notifications } from './repository.js';
import { settleReversal } from './reversals.js';
import type { Applied } from './apply.js';

type FollowUpSettled = Extract<ConnectorEvent, { kind: 'FOLLOW_UP_SETTLED' }>;

/** Our transaction type for the connector's operation. */
const TYPE_OF: Record<FollowUpSettled['operation'], string> = { CAPTURE: 'CAPTURE', REFUND: 'REFUND', VOID: 'CANCEL' };

const failureMessage = (e: FollowUpSettled) => e.reason ?? `The provider reported that the ${e.operation.toLowerCase()} failed.`;

/** The provider's notification as the answer settleFollowUp records for a PENDING follow-up. */
function answerOf(e: FollowUpSettled): ProviderResult {
  const confirmed = e.outcome === 'CONFIRMED';
  return {
    outcome: confirmed ? 'SUCCEEDED' : 'DECLINED',
    providerTransactionId: e.providerOperationId ?? '',
    responseCode: confirmed ? 'SUCCEEDED' : 'FAILED_AT_PROVIDER',
    responseMessage: confirmed ? `The provider confirmed the ${e.operation.toLowerCase()}.` : failureMessage(e),
    iso8583ResponseCode: confirmed ? '00' : '05',
    iso8583ResponseMessage: confirmed ? 'Approved' : 'Do not honor',
    merchantAdviceCode: null,
    merchantAdviceCodeMessage: null,
    authorizationCode: null,
    retrievalReferenceNumber: null,
    rawResponse: { notification_id: e.notificationId, operation: e.operation, outcome: e.outcome },
  };
}

export async function settleByNotification(tx: Queryable, e: FollowUpSettled, transactionId: string): Promise<Applied> {
  const t = await attempts.find(tx, transactionId);
  if (!t) return { state: 'IGNORED', detail: `no transaction ${transactionId}` };
  // A late approval's reversal is no transaction of its own: its outcome is the attempt's (reversals.ts).
  if (isAttempt(t)) return settleReversal(tx, e, t);
  if (t.type !== TYPE_OF[e.operation]) return { state: 'IGNORED', detail: `names a ${e.operation}, but transaction ${t.id} is a ${t.type}` };
  if (t.status === 'PENDING') {
    await settleFollowUp(tx, t.id, { kind: 'answered', result: answerOf(e) });
    if (e.outcome === 'FAILED') {
      const payment = (await repo.lockPaymentById(tx, t.payment_id))!;
      await recordOperationFailedEvent(tx, payment, (await repo.findTransaction(tx, payment.id, t.id))!);
    }
    return { state: 'APPLIED', detail: null };
  }
  if (t.status === 'SUCCEEDED') {
    if (e.outcome === 'CONFIRMED') return { state: 'UNCHANGED', detail: null };
    await undoFollowUp(tx, t, failureMessage(e));
    return { state: 'APPLIED', detail: null };
  }
  if (e.outcome === 'FAILED') return { state: 'UNCHANGED', detail: null };
  // Confirmed late (a refund "not found" for the settle window, processed after it): applied if the
  // payment can still take it, else left as recorded and logged as an error (lifecycle.ts lateAnswer).
  const late = await settleFollowUp(tx, t.id, { kind: 'answered', result: answerOf(e) });
  if (late.state === 'LATE_APPLIED') return { state: 'APPLIED', detail: late.detail };
  return { state: late.state === 'CONFLICT' ? 'IGNORED' : 'UNCHANGED', detail: late.detail, ...(late.state === 'CONFLICT' && late.alert ? { alert: late.alert } : {}) };
}

/** A follow-up the provider had accepted did not go through: its effect on the payment is undone. */
async function undoFollowUp(tx: Queryable, t: TransactionRow, message: string): Promise<void> {
  const payment = (await repo.lockPaymentById(tx, t.payment_id))!;
  await notifications.markFailed(tx, t.id, message);
  const next = await undone(tx, payment, t);
  const updated = await repo.movePayment(tx, payment.id, next, { transactionId: t.id, transactionStatus: 'DECLINED', reason: 'FAILED_AT_PROVIDER' });
  await recordOperationFailedEvent(tx, updated, (await repo.findTransaction(tx, payment.id, t.id))!);
}

const atLeastZero = (d: string) => (compareDecimal(d, '0') < 0 ? '0' : d);

/**
 * The payment without the follow-up: a refund's amount is refundable again, a capture's authorization
 * uncaptured again, a cancel's authorization standing again. While a chargeback is open (or lost) the
 * dispute keeps the status: only the amounts change, as an approved refund does then (and a won dispute
 * gives the payment the state they make: disputes.ts). The state from the amounts is refund-state.ts
 * capturedState, the one rule for both: money that was never captured is not held as captured, whatever
 * was refunded since (that stays recorded, and nothing more can be refunded: lifecycle.ts reserveRefund);
 * with nothing refunded any more, the sub-status the payment had before its first refund.
 */
async function undone(tx: Queryable, payment: PaymentRow, t: TransactionRow): Promise<{ status: string; subStatus: string; captured?: string; refunded?: string }> {
  const same = { status: payment.status, subStatus: payment.sub_status };
  if (t.type === 'CANCEL') {
    if (payment.status === 'CANCELED') return { status: t.payment_status_before ?? 'PENDING', subStatus: t.payment_sub_status_before ?? 'AUTHORIZED' };
    return same;
  }
  const changed =
    t.type === 'REFUND' ? { refunded: atLeastZero(subtractDecimal(payment.amount_refunded, t.amount)) } : { captured: atLeastZero(subtractDecimal(payment.amount_captured, t.amount)) };
  if (payment.status !== 'SUCCEEDED' && payment.status !== 'REFUNDED') return { ...same, ...changed };
  const amounts = { captured: payment.amount_captured, refunded: payment.amount_refunded, ...changed };
  return { ...capturedState(await repo.listTransactions(tx, payment.id), amounts, 'APPROVED'), ...changed };
}
