/**
 * A provider's later word on the reversal of a late approval (orchestration/reversals.ts): the reversal is
 * no transaction of its own, so its outcome is found by the attempt it reverses (apply.ts locateFollowUp)
 * and settled here, the payment locked:
 *   attempt CANCELED / LATE_APPROVAL_REVERSED (the provider had accepted the reversal)
 *       FAILED    → the attempt reads LATE_APPROVAL_REVERSAL_FAILED: PENDING, due for reconciliation, which
 *                   reverses it again under a new reference; ERROR after MAX_REVERSALS (an operator's).
 *                   payment.operation.failed, and an error log (receive.ts). The payment is unchanged.
 *       CONFIRMED → nothing changes (UNCHANGED)
 *   attempt PENDING after a failure, the next reversal on its way: its FAILED (named by its reference) counts
 *                   as above, and reconciliation does not record that reversal reversed
 *   a word on an earlier reversal (already counted), or on an attempt given up (ERROR) → UNCHANGED
 */
import type { Queryable } from '../../db/database.js';
import { orchestrationRepository as attempts, type AttemptRow } from '../../orchestration/repository.js';
import { isReversalReference, LATE_APPROVAL_REVERSAL_FAILED, MAX_REVERSALS } from '../../orchestration/reversals.js';
import { LATE_APPROVAL_REVERSED, reversalFailedRecord } from '../../orchestration/settle.js';
import type { ConnectorEvent } from '../../providers/connector.js';
import { recordOperationFailedEvent } from '../events.js';
import { paymentsRepository as repo } from '../repository.js';
import type { Applied } from './apply.js';

type FollowUpSettled = Extract<ConnectorEvent, { kind: 'FOLLOW_UP_SETTLED' }>;

export async function settleReversal(tx: Queryable, e: FollowUpSettled, attempt: AttemptRow): Promise<Applied> {
  if (e.operation === 'CAPTURE') return { state: 'IGNORED', detail: `names a CAPTURE, but transaction ${attempt.id} is a ${attempt.type}` };
  if (e.reference !== null && !isReversalReference(attempt.id, e.reference)) {
    return { state: 'IGNORED', detail: `reference ${e.reference} is none of the reversals of late approval ${attempt.id}` };
  }
  if (e.outcome === 'CONFIRMED') return { state: 'UNCHANGED', detail: null };
  // Which reversal failed, where the provider says (Adyen, Stripe; Mercado Pago names none): the latest one
  // sent, or an earlier one already counted.
  const latest = e.reference === null || isReversalReference(attempt.id, e.reference, attempt.reversals_failed);
  const reversed = attempt.status === 'CANCELED' && attempt.reason === LATE_APPROVAL_REVERSED;
  // PENDING after a failure: the next reversal may be on its way (its answer not recorded yet); its own
  // failure, named by its reference, counts now, so reconciliation does not record it reversed after all.
  const sending = attempt.status === 'PENDING' && attempt.reason === LATE_APPROVAL_REVERSAL_FAILED && e.reference !== null;
  if (!latest || !(reversed || sending)) return { state: 'UNCHANGED', detail: null };
  const payment = (await repo.lockPaymentById(tx, attempt.payment_id))!;
  const retried = attempt.reversals_failed + 1 < MAX_REVERSALS;
  const message = e.reason ?? `the provider reported that the ${e.operation.toLowerCase()} failed`;
  await attempts.recordReversalFailed(tx, attempt.id, reversalFailedRecord(attempt, message, retried));
  await recordOperationFailedEvent(tx, payment, (await repo.findTransaction(tx, payment.id, attempt.id))!);
  return {
    state: 'APPLIED',
    detail: retried ? 'the reversal of a late approval failed at the provider: reconciliation reverses it again' : `the reversal of a late approval failed ${MAX_REVERSALS} times`,
    alert: {
      message: retried
        ? 'the reversal of a late approval failed at the provider: the shopper is charged twice until reconciliation reverses it again'
        : `the reversal of a late approval failed at the provider ${MAX_REVERSALS} times: the shopper is charged twice, reverse it at the provider by hand`,
      paymentId: payment.id,
      transactionId: attempt.id,
    },
  };
}
