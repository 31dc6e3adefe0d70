/**
 * The reversal of a late approval (an attempt approved after its payment was approved elsewhere or ended):
 * reconciliation voids it at its provider (reconciliation.ts settleAttempt) and records the attempt
 * CANCELED / LATE_APPROVAL_REVERSED once the provider accepted the void. Accepted is not done everywhere:
 * Adyen answers a cancel-or-refund "received" and says later (CANCEL_OR_REFUND, success true or false), a
 * Stripe or Mercado Pago reversal refund can fail after it was created. The provider's later word comes
 * as a FOLLOW_UP_SETTLED notification naming the attempt's provider transaction (and, where the provider
 * carries it, the reversal's reference): payments/provider-notifications/reversals.ts finds the attempt by it.
 * A failed reversal is never silent: the attempt reads LATE_APPROVAL_REVERSAL_FAILED (PENDING, due for
 * reconciliation, which reverses it again under a new reference) and payment.operation.failed is recorded;
 * after MAX_REVERSALS failures the attempt is ERROR / LATE_APPROVAL_REVERSAL_FAILED, left to an operator.
 */
import { createHash } from 'node:crypto';

export const LATE_APPROVAL_REVERSAL_FAILED = 'LATE_APPROVAL_REVERSAL_FAILED';

/** Reversals of one late approval sent at most (the first and two more after failures). */
export const MAX_REVERSALS = 3;

/** A stable idempotency reference (UUID-shaped) for an operation derived from a transaction: the same on every retry. */
export function derivedReference(purpose: string, transactionId: string): string {
  const h = createHash('sha256').update(`${purpose}:${transactionId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The reference of the attempt's reversal after `failedBefore` failed ones: the first is `void` (what every
 * earlier version sent), each later one its own, so a retry is a new operation at the provider and a
 * retry of the same one (a lost answer) finds the same.
 */
export function reversalReference(attemptId: string, failedBefore: number): string {
  return derivedReference(failedBefore === 0 ? 'void' : `void:${failedBefore + 1}`, attemptId);
}

/**
 * Whether a provider's reference names one of the attempt's reversals (Stripe and Mercado Pago suffix their
 * refund's), or, with `only`, the reversal sent after `only` failed ones.
 */
export function isReversalReference(attemptId: string, reference: string, only?: number): boolean {
  for (let n = only ?? 0; n < (only === undefined ? MAX_REVERSALS : only + 1); n++) {
    const r = reversalReference(attemptId, n);
    if (reference === r || reference === `${r}:reversal`) return true;
  }
  return false;
}
