/**
 * A captured payment's state from what has been refunded of it: REFUNDED once refunds reach what was
 * captured, SUCCEEDED / PARTIALLY_REFUNDED before. One rule for an approved refund (lifecycle.ts) and for
 * a dispute won after a refund was approved while it was open (disputes.ts).
 */
import { compareDecimal } from './money.js';

export function refundedState(captured: string, refunded: string): { status: 'REFUNDED' | 'SUCCEEDED'; subStatus: 'REFUNDED' | 'PARTIALLY_REFUNDED' } {
  return compareDecimal(refunded, captured) >= 0 ? { status: 'REFUNDED', subStatus: 'REFUNDED' } : { status: 'SUCCEEDED', subStatus: 'PARTIALLY_REFUNDED' };
}
