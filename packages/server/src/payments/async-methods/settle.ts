/**
 * How a waiting asynchronous payment ends, in the caller's transaction with the payment locked: by the
 * provider's notification (the shopper paid, the provider refused it, the shopper cancelled it, the
 * provider's own deadline passed) or by the expiry worker at the action's deadline. Each end is one
 * change of the payment, its history row and its event, exactly once: whatever comes second finds the
 * attempt no longer waiting and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/database.js';
import { takeApproval } from '../../orchestration/settle.js';
import { orchestrationRepository } from '../../orchestration/repository.js';
import { paymentPort } from '../orchestration-port.js';
import { recordPaymentOutcome } from '../events.js';
import { paymentsRepository as payments, type PaymentRow } from '../repository.js';
import { recordEvent } from '../../webhooks/index.js';
import { toApiPayment } from '../mapper.js';
import { asyncPaymentsRepository as repo } from './repository.js';
import { ATTEMPT_WAITING, WAITING } from './methods.js';

export type AsyncOutcome = 'SUCCEEDED' | 'DECLINED' | 'EXPIRED' | 'CANCELED';

export interface Settled {
  state: 'APPLIED' | 'UNCHANGED' | 'IGNORED';
  detail: string | null;
}

const CODES: Record<AsyncOutcome, [code: string, message: string]> = {
  SUCCEEDED: ['SUCCEEDED', 'The shopper paid'],
  DECLINED: ['DECLINED', 'The provider refused the payment'],
  EXPIRED: ['EXPIRED', 'The payment was not made before its deadline'],
  CANCELED: ['CANCELED', 'The shopper cancelled the payment'],
};

const isWaiting = (p: Pick<PaymentRow, 'status' | 'sub_status'>) => p.status === WAITING.status && p.sub_status === WAITING.subStatus;

/** payment.expired (the other ends have their events already: succeeded, declined, canceled). */
async function recordExpired(tx: Queryable, payment: PaymentRow): Promise<void> {
  await recordEvent(tx, {
    organizationId: payment.organization_id,
    accountId: payment.account_id,
    type: 'payment.expired',
    data: { payment: toApiPayment(payment, await payments.listTransactions(tx, payment.id), null, { rawResponse: false }) },
    resourceId: payment.id,
  });
}

/**
 * Ends the payment's waiting attempt `attemptId` with `outcome`. A payment the worker expired that the
 * provider then reports paid took the shopper's money: it is taken (SUCCEEDED), not ignored.
 */
export async function settleAsyncPayment(tx: Queryable, paymentId: string, attemptId: string, outcome: AsyncOutcome, reason: string | null): Promise<Settled> {
  const payment = (await payments.lockPaymentById(tx, paymentId))!;
  const attempt = await orchestrationRepository.find(tx, attemptId);
  if (!attempt) return { state: 'IGNORED', detail: `no attempt ${attemptId}` };
  const latePayment = outcome === 'SUCCEEDED' && payment.status === 'EXPIRED' && attempt.status === 'EXPIRED';
  if (attempt.status !== ATTEMPT_WAITING && !latePayment) {
    return attempt.status === outcome ? { state: 'UNCHANGED', detail: null } : { state: 'IGNORED', detail: `attempt ${attempt.id} ended already (${attempt.status})` };
  }
  if (!isWaiting(payment) && !latePayment) return { state: 'IGNORED', detail: `payment ${payment.id} is ${payment.status} / ${payment.sub_status}, not waiting for the shopper` };

  const [code, message] = CODES[outcome];
  await repo.endAttempt(tx, attempt.id, outcome, code, reason ?? message);
  if (outcome === 'SUCCEEDED') {
    // As a card purchase approved: SUCCEEDED / APPROVED, captured, history, payment.succeeded.
    await takeApproval(paymentPort, tx, payment, { ...attempt, status: 'SUCCEEDED' }, null, null);
    return { state: 'APPLIED', detail: latePayment ? 'paid after it had expired here: taken' : null };
  }
  const ended = await payments.updatePayment(tx, payment.id, { status: outcome, subStatus: outcome, paymentMethod: null });
  await payments.insertHistory(tx, { id: randomUUID(), paymentId: payment.id, status: outcome, subStatus: outcome, transactionId: attempt.id, transactionStatus: outcome, reason: code });
  if (outcome === 'EXPIRED') await recordExpired(tx, ended);
  else await recordPaymentOutcome(tx, ended, outcome === 'DECLINED' ? 'payment.declined' : 'payment.canceled');
  return { state: 'APPLIED', detail: null };
}

/** The expiry worker's end of a payment it claimed (locked): its waiting attempt EXPIRED, the payment too. */
export async function expireAsyncPayment(tx: Queryable, paymentId: string): Promise<boolean> {
  const attempt = await repo.waitingAttempt(tx, paymentId);
  if (!attempt) return false;
  return (await settleAsyncPayment(tx, paymentId, attempt.id, 'EXPIRED', null)).state === 'APPLIED';
}
