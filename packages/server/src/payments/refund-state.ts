/**
 * A payment's state from its amounts. One rule for an approved refund (lifecycle.ts), for a capture or
 * refund the provider reported failed after accepting it (provider-notifications/follow-ups.ts undone) and
 * for a dispute won after the amounts changed while it was open (disputes.ts wonState): a refund approved,
 * or a refund or capture reported failed, while a chargeback is open changes only the amounts, and the
 * won dispute then gives the payment the state those amounts make.
 */
import { compareDecimal } from './money.js';
import type { TransactionRow } from './repository.js';

type State = { status: string; subStatus: string };

/** A captured payment's state from what has been refunded of it: REFUNDED once refunds reach what was captured, SUCCEEDED / PARTIALLY_REFUNDED before. */
export function refundedState(captured: string, refunded: string): { status: 'REFUNDED' | 'SUCCEEDED'; subStatus: 'REFUNDED' | 'PARTIALLY_REFUNDED' } {
  return compareDecimal(refunded, captured) >= 0 ? { status: 'REFUNDED', subStatus: 'REFUNDED' } : { status: 'SUCCEEDED', subStatus: 'PARTIALLY_REFUNDED' };
}

/**
 * The state of a payment whose money was captured (a purchase, or an authorization captured), from its
 * amounts now and its transactions:
 *   nothing captured any more (its capture failed at the provider) → the authorization stands again: the
 *     state before the capture (PENDING / AUTHORIZED); what was refunded stays recorded, nothing more can be;
 *   something refunded → refundedState;
 *   nothing refunded → SUCCEEDED with the sub-status before its first refund, or `unrefunded` if it never had one.
 */
export function capturedState(transactions: readonly TransactionRow[], amounts: { captured: string; refunded: string }, unrefunded: string): State {
  if (compareDecimal(amounts.captured, '0') <= 0) {
    const capture = transactions.find((x) => x.type === 'CAPTURE' && x.payment_status_before !== null);
    return { status: capture?.payment_status_before ?? 'PENDING', subStatus: capture?.payment_sub_status_before ?? 'AUTHORIZED' };
  }
  if (compareDecimal(amounts.refunded, '0') > 0) return refundedState(amounts.captured, amounts.refunded);
  const first = transactions.find((x) => x.type === 'REFUND' && x.payment_status_before === 'SUCCEEDED' && x.payment_sub_status_before !== 'PARTIALLY_REFUNDED');
  return { status: 'SUCCEEDED', subStatus: first?.payment_sub_status_before ?? unrefunded };
}
