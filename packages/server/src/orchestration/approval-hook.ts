/**
 * What else a payment's approval changes, in the approving transaction, that is neither payments' nor
 * orchestration's: a payment made through a payment link is recorded by the link, which announces
 * payment_link.paid (checkout/link-state.ts onPaymentApproved). Checkout builds on payments and on this
 * engine, so neither imports it: the composition root hands the hook over once at start (src/services.ts),
 * before any payment can be approved. A slot of this module rather than a member of PaymentPort because
 * payments' own settlements (async-methods/settle.ts, reached from provider notifications and the expiry
 * worker) call takeApproval where no wired service is at hand.
 */
import type { Queryable } from '../db/database.js';
import type { PaymentRow } from '../db/payment-rows.js';

export type ApprovalHook = (tx: Queryable, payment: PaymentRow) => Promise<void>;

let hook: ApprovalHook | undefined;

/** Set by src/services.ts at start: the same function for every server of the process. */
export function setApprovalHook(h: ApprovalHook): void {
  hook = h;
}

/** Runs the hook in `tx`; throws when none was set rather than approve a link's payment the link never learns of. */
export async function runApprovalHook(tx: Queryable, payment: PaymentRow): Promise<void> {
  if (!hook) throw new Error('orchestration: no approval hook was set (src/services.ts sets it at start)');
  await hook(tx, payment);
}
